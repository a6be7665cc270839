// The NRI plugin as the status file and /proc under --root show it: connected, disconnected,
// stale (its supervisor gone, or its pid now another process's) or absent; a problem only where
// a plugin is expected (NRI mode installed, or a supervisor running).
import t from 'tap';
import { readNode, type NodeView, type RecordedInstall } from '../../src/doctor/node.ts';
import { pluginView } from '../../src/doctor/plugin-state.ts';
import { sampleStatus } from '../helpers/nri/status.ts';
import type { NriStatus } from '../../src/nri/status-file.ts';

const PID = 4242;
const nri = { runtime: 'containerd', mode: 'nri', record: {} } as unknown as RecordedInstall;
/** /proc/<pid>/stat with start time `ticks` (field 22), after a command name with a space and a parenthesis. */
const stat = (ticks: number) => ({ stat: `${PID} (envhook nri) x) S ${'0 '.repeat(18)}${ticks} ${'0 '.repeat(20)}\n` });

function node(status: NriStatus | undefined, running: number | undefined, installs: RecordedInstall[] = []): NodeView {
  const root = t.testdir(running === undefined ? {} : { proc: { [PID]: stat(running) } });
  return { ...readNode({ root, prefix: '/usr/local/lib/envhook' }, {}), installs, status };
}

t.test('connected: no problem, how it runs from the file', async (t) => {
  t.same(pluginView(node(sampleStatus({ pid: PID, pidStartTicks: 77, runsAs: 'daemonset' }), 77)), {
    state: 'connected',
    runsAs: 'daemonset',
    problem: null,
  });
  t.same(
    pluginView(node(sampleStatus({ pid: PID }), 5)),
    { state: 'connected', runsAs: null, problem: null },
    'an older file: the pid alone',
  );
});

t.test('disconnected: a problem, with since when', async (t) => {
  t.same(pluginView(node(sampleStatus({ pid: PID, connected: false, since: '2026-11-26T10:01:00.000Z' }), 1)), {
    state: 'disconnected',
    runsAs: null,
    problem: 'NRI plugin not connected since 2026-11-26T10:01:00.000Z',
  });
});

t.test('stale or absent: a problem only where NRI mode is installed', async (t) => {
  const reused = sampleStatus({ pid: PID, pidStartTicks: 77 });
  t.same(pluginView(node(reused, 78)), { state: 'stale', runsAs: null, problem: null }, 'the pid is another process now');
  t.same(pluginView(node(reused, undefined, [nri])), {
    state: 'stale',
    runsAs: null,
    problem: `NRI plugin installed but not running: its supervisor (pid ${PID}) is gone`,
  });
  t.same(pluginView(node(undefined, undefined)), { state: 'absent', runsAs: null, problem: null });
  t.same(pluginView(node(undefined, undefined, [nri])), {
    state: 'absent',
    runsAs: null,
    problem: 'NRI plugin installed but not running: no status file /run/envhook/nri-status.json',
  });
});
