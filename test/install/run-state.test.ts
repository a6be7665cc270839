// The NRI plugin's run state uninstall removes: the status file and the records of the pods it
// watched, only once the status file's supervisor no longer runs; the run directory when emptied.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { makeLayout } from '../../src/install/layout.ts';
import { nriRunState, removeNriRunState, runningSupervisor } from '../../src/install/run-state.ts';
import { procStat } from '../../src/nri/proc-stat.ts';
import { sampleStatus } from '../helpers/nri/status.ts';

function node(status: object, extra: Record<string, unknown> = {}) {
  const root = t.testdir({ proc: t.fixture('symlink', '/proc'), run: { envhook: { 'nri-owners': { u1: '{}' }, ...extra } } });
  fs.writeFileSync(path.join(root, 'run/envhook/nri-status.json'), JSON.stringify(status));
  return { root, layout: makeLayout('containerd', { root }) };
}

t.test('a plugin gone: its status file and records removed, and the directory they leave empty', async (t) => {
  const { root, layout } = node(sampleStatus({ pid: 4194304 }));
  t.same(nriRunState(layout, '/run/envhook'), ['/run/envhook/nri-status.json', '/run/envhook/nri-owners']);
  t.same(removeNriRunState(layout, '/run/envhook'), ['/run/envhook/nri-status.json', '/run/envhook/nri-owners', '/run/envhook']);
  t.notOk(fs.existsSync(path.join(root, 'run/envhook')));
});

t.test("a plugin still running keeps its state; what is not the plugin's stays", async (t) => {
  const running = node(sampleStatus({ pid: process.pid, pidStartTicks: procStat(process.pid)!.startTicks }));
  t.same(removeNriRunState(running.layout, '/run/envhook'), [], 'running: nothing removed');
  t.ok(fs.existsSync(path.join(running.root, 'run/envhook/nri-status.json')));
  const shim = node(sampleStatus({ pid: 4194304 }), { owners: { u2: '{}' } });
  t.same(removeNriRunState(shim.layout, '/run/envhook'), ['/run/envhook/nri-status.json', '/run/envhook/nri-owners']);
  t.ok(fs.existsSync(path.join(shim.root, 'run/envhook/owners/u2')), "the shim's records stay (envhook watch reads them)");
  t.same(removeNriRunState(makeLayout('containerd', { root: t.testdir({}) }), '/run/envhook'), [], 'nothing there: nothing');
});

t.test('a status file from before start times were recorded: its pid alone keeps the state, and is never the one to signal', async (t) => {
  const { root, layout } = node(sampleStatus({ pid: process.pid, pidStartTicks: undefined }));
  t.same(removeNriRunState(layout, '/run/envhook'), [], 'its pid runs: nothing removed');
  t.ok(fs.existsSync(path.join(root, 'run/envhook/nri-status.json')));
  t.equal(runningSupervisor(layout, '/run/envhook'), undefined, 'no start time to tell it from a reused pid: not signalled');
  const exact = node(sampleStatus({ pid: process.pid, pidStartTicks: procStat(process.pid)!.startTicks }));
  t.equal(runningSupervisor(exact.layout, '/run/envhook'), process.pid, 'with its start time: the one to signal');
});
