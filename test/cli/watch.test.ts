// `envhook watch` as a real process: records from the shim's side, a rewrite owned, SIGTERM.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { builtCli, envhook, NODE, spawnEnvhook } from '../helpers/bundle.ts';
import { atomicWrite, makeAtomicVolume, makePod } from '../../scripts/kubelet-pod.ts';
import { writeOwnersRecord } from '../../src/watch/record.ts';
import { findChrt } from '../../src/nri/realtime.ts';
import { threadPolicies } from '../helpers/proc.ts';
import { waitFor } from '../helpers/wait.ts';
import { refused } from '../helpers/refusal.ts';

t.test('watches the recorded pods until SIGTERM, then exits 0', async (t) => {
  const dir = t.testdir({});
  const pod = makePod(path.join(dir, 'kubelet'));
  const vol = makeAtomicVolume(pod, 'configmap', 'cfg', { 'app.conf': { data: 'CANARY-cli', mode: 0o400 } });
  const runDir = path.join(dir, 'run');
  const logFile = path.join(dir, 'log');
  const child = spawnEnvhook(
    ['watch', '--run-dir', runDir, '--kubelet-root', pod.kubeletRoot, '--log-file', logFile, '--log-level', 'debug'],
    ['ignore', 'pipe', 'pipe'],
  );
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  t.teardown(() => child.kill('SIGKILL'));
  const log = () => (fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8') : '');
  await waitFor(() => log().includes('watching owners records'), 20_000, 'start');
  writeOwnersRecord(runDir, {
    podUid: pod.uid,
    podDir: pod.dir,
    volumes: [{ volume: 'cfg', dir: vol, defaultUser: 1000, uidMapping: { kind: 'none' } }],
  });
  const owner = () => fs.lstatSync(path.join(vol, '..data/app.conf')).uid;
  await waitFor(() => owner() === 1000, 10_000, 'owned');
  for (let i = 0; i < 10; i++) {
    atomicWrite(vol, { 'app.conf': { data: `CANARY-cli-${i}`, mode: 0o400 } });
    await waitFor(() => owner() === 1000, 10_000, `rewrite ${i}`);
  }
  child.kill('SIGTERM');
  t.equal(await exited, 0, 'SIGTERM: a clean exit');
  t.equal(out, '', 'nothing on stdout or stderr');
  t.match(log(), '"msg":"stopped watching"');
  t.notMatch(log(), 'CANARY');
});

t.test('a run directory others can write: one line, exit 1', async (t) => {
  const runDir = path.join(t.testdir({}), 'run');
  fs.mkdirSync(runDir);
  fs.chmodSync(runDir, 0o777);
  const kubeletRoot = { ENVHOOK_KUBELET_ROOT: path.dirname(runDir) };
  const r = envhook(['watch', '--run-dir', runDir], { env: kubeletRoot });
  refused(t, r, `envhook: run directory ${runDir} must be owned by root and not writable by group or others\n`);
  t.equal(r.stdout, '');
  const env = envhook(['watch'], { env: { ...kubeletRoot, ENVHOOK_RUN_DIR: runDir } });
  t.equal(env.stderr, r.stderr, 'ENVHOOK_RUN_DIR is read');
  const config = path.join(path.dirname(runDir), 'config.json');
  fs.writeFileSync(config, JSON.stringify({ runDir }));
  t.equal(envhook(['watch'], { env: { ...kubeletRoot, ENVHOOK_CONFIG: config } }).stderr, r.stderr, 'runDir in the config file is read');
});

t.test(
  '--fifo-priority: every thread of the watcher under SCHED_FIFO',
  { skip: findChrt() ? false : 'no chrt (util-linux)' },
  async (t) => {
    const dir = t.testdir({});
    const logFile = path.join(dir, 'log');
    const child = spawnEnvhook([
      'watch',
      '--run-dir',
      path.join(dir, 'run'),
      '--kubelet-root',
      dir,
      '--fifo-priority',
      '10',
      '--log-file',
      logFile,
      '--log-level',
      'debug',
    ]);
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    t.teardown(() => child.kill('SIGKILL'));
    const log = () => (fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8') : '');
    await waitFor(() => log().includes('watching owners records'), 20_000, 'start');
    t.match(log(), /"fifoPriority":10,"msg":"watch: under SCHED_FIFO"/);
    const policies = threadPolicies(child.pid!);
    t.ok(policies.length > 1, 'Node runs several threads');
    t.same(
      policies,
      policies.map(() => 1),
      'each of them SCHED_FIFO',
    );
    child.kill('SIGTERM');
    t.equal(await exited, 0);
  },
);

t.test('--fifo-priority out of range: one line, exit 1', async (t) => {
  const r = envhook(['watch', '--run-dir', t.testdir({}), '--fifo-priority', '0']);
  refused(t, r, 'envhook: --fifo-priority: must be a SCHED_FIFO priority, 1 to 99\n');
});

t.test('logs JSON lines to stderr without a log file, as envhook nri does; stdout stays empty', async (t) => {
  const dir = t.testdir({ kubelet: {} });
  const child = spawn(NODE, [builtCli(), 'watch', '--run-dir', path.join(dir, 'run'), '--kubelet-root', path.join(dir, 'kubelet')], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (err += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  t.teardown(() => child.kill('SIGKILL'));
  await waitFor(() => err.includes('"msg":"watching owners records"'), 20_000, 'the start line on stderr');
  child.kill('SIGTERM');
  t.equal(await exited, 0);
  const lines = err.trimEnd().split('\n');
  t.ok(
    lines.every((l) => typeof JSON.parse(l).msg === 'string'),
    'every line is a JSON log line',
  );
  t.match(err, /"level":30,.*"signal":"SIGTERM","msg":"signal"/);
  t.equal(out, '', 'nothing on stdout');
});

t.test('a kubelet root that is not there, or not a directory: one line, exit 1', async (t) => {
  const dir = t.testdir({ file: 'x' });
  const fix = "set --kubelet-root (ENVHOOK_KUBELET_ROOT, kubeletRoot) to the kubelet's --root-dir";
  const cases: [string[], NodeJS.ProcessEnv, string][] = [
    [['--kubelet-root', '/nonexistent'], {}, `envhook: kubelet root /nonexistent does not exist: ${fix}\n`],
    [[], { ENVHOOK_KUBELET_ROOT: path.join(dir, 'file') }, `envhook: kubelet root ${path.join(dir, 'file')} is not a directory: ${fix}\n`],
  ];
  for (const [args, env, line] of cases) {
    const r = spawnSync(NODE, [builtCli(), 'watch', '--run-dir', path.join(dir, 'run'), ...args], {
      encoding: 'utf8',
      env: { ...process.env, ...env },
      timeout: 60_000,
    });
    t.equal(r.stderr, line);
    t.equal(r.status, 1);
    t.equal(r.stdout, '');
  }
});

t.test('--file-group: the log file 0640 with that group; a group the node does not have: one line, exit 1', async (t) => {
  const dir = t.testdir({ kubelet: {} });
  const logFile = path.join(dir, 'watch.log');
  const args = ['watch', '--run-dir', path.join(dir, 'run'), '--kubelet-root', path.join(dir, 'kubelet'), '--log-file', logFile];
  refused(
    t,
    envhook([...args, '--file-group', 'no-such-group-here'], { env: { ENVHOOK_CONFIG: '' } }),
    'envhook: fileGroup "no-such-group-here" (--file-group, ENVHOOK_FILE_GROUP): no such group in /etc/group: name a group of the node or its GID\n',
  );
  const child = spawnEnvhook([...args, '--file-group', '4']);
  const exited = new Promise((r) => child.once('exit', r));
  await waitFor(() => fs.existsSync(logFile) && fs.readFileSync(logFile, 'utf8').includes('watching owners records'), 20_000, 'start');
  child.kill('SIGTERM');
  t.equal(await exited, 0);
  t.same([fs.statSync(logFile).mode & 0o777, fs.statSync(logFile).gid], [0o640, 4]);
});
