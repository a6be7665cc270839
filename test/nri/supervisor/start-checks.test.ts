// What can fail at start is checked before anything starts: one line each, naming what to fix.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { loadSettings } from '../../../src/settings.ts';
import { checkStart } from '../../../src/nri/supervisor/start-checks.ts';
import { spawn } from 'node:child_process';
import { procStat } from '../../../src/nri/proc-stat.ts';
import { emptyCounts, statusPath, writeStatus } from '../../../src/nri/status-file.ts';
import { envhook } from '../../helpers/bundle.ts';
import { refused } from '../../helpers/refusal.ts';

// No environment and no config file: the flags and the defaults only.
const settings = (flags: Parameters<typeof loadSettings>[0]) => loadSettings(flags, {}, {});

t.test('socket paths too long for a unix socket, named NRI or CRI with their length', async (t) => {
  const dir = t.testdir();
  const long = `/${'s'.repeat(107)}`;
  await t.rejects(checkStart(settings({ nriSocket: long }), dir), {
    message: 'NRI socket path is 108 bytes: a unix socket path has at most 107',
  });
  await t.rejects(checkStart(settings({ criSocket: long }), dir), {
    message: 'CRI socket path is 108 bytes: a unix socket path has at most 107',
  });
  await t.resolves(checkStart(settings({ nriSocket: `/${'s'.repeat(106)}` }), dir), '107 bytes is fine');
});

t.test('the run directory must be usable: one below a file cannot be made', async (t) => {
  const file = path.join(t.testdir(), 'file');
  fs.writeFileSync(file, '');
  const runDir = path.join(file, 'run');
  await t.rejects(checkStart(settings({}), runDir), {
    message: `cannot create run directory ${runDir}: a part of the path is not a directory (ENOTDIR)`,
  });
});

// A supervisor for another runtime socket keeps the run directory: its status file is what
// `envhook status` and `doctor` read as the node's plugin. The built CLI, as an admin runs an
// ad-hoc `envhook nri --socket` for another runtime; a live process stands for that supervisor.
t.test('a run directory whose envhook nri runs for another NRI socket: refused, its status file kept', async (t) => {
  const runDir = t.testdir();
  const other = spawn('sleep', ['60'], { stdio: 'ignore' });
  t.teardown(() => void other.kill());
  const ticks = procStat(other.pid!)!.startTicks;
  const status = (nriSocket: string, pidStartTicks = ticks) => ({
    version: 1 as const,
    pid: other.pid!,
    pidStartTicks,
    startedAt: new Date().toISOString(),
    plugin: '50-envhook',
    runsAs: 'pre-installed' as const,
    nriSocket,
    connected: true,
    since: new Date().toISOString(),
    runtime: { name: 'containerd', version: '2.1.9' },
    counts: emptyCounts(),
    updatedAt: new Date().toISOString(),
  });
  writeStatus(runDir, status('/var/run/nri/nri.sock'));
  const before = fs.readFileSync(statusPath(runDir));
  const r = envhook(['nri', '--socket', '/run/crio-test/nri.sock', '--run-dir', runDir], { env: { ENVHOOK_CONFIG: '' } });
  refused(
    t,
    r,
    `envhook: run directory ${runDir} is in use by envhook nri for the NRI socket /var/run/nri/nri.sock (pid ${other.pid}): give this one, for /run/crio-test/nri.sock, a run directory of its own (--run-dir, ENVHOOK_RUN_DIR, runDir)\n`,
  );
  t.same(fs.readFileSync(statusPath(runDir)), before, "the node's plugin's status file as it was");
  // the same socket is the instance lock's matter; a supervisor gone (another start time) is history
  await t.resolves(checkStart(settings({ nriSocket: '/var/run/nri/nri.sock', runDir }), runDir));
  writeStatus(runDir, status('/var/run/nri/nri.sock', ticks + 1));
  await t.resolves(checkStart(settings({ nriSocket: '/run/crio-test/nri.sock', runDir }), runDir));
});
