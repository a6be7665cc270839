// `envhook nri` as a process: settings (flag, environment, config file), reconnecting with
// backoff, surviving a bad peer, a clean exit on SIGTERM, the V8 option of supervisor and worker.
// The supervisor's own cases: test/nri/supervisor/main.test.ts.
import t from 'tap';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { builtCli, envhook, NODE } from '../helpers/bundle.ts';
import { leftoverProcesses } from '../helpers/leftovers.ts';
import { lockName } from '../../src/nri/supervisor/lock.ts';
import { startFakeRuntime } from '../helpers/nri/runtime.ts';
import { startNriProcess } from '../helpers/nri/process.ts';
import { DAEMON_NODE_OPTION, SUPERVISOR_NODE_OPTION } from '../../src/nri/process.ts';
import { sleep } from '../helpers/wait.ts';
import { refused } from '../helpers/refusal.ts';

t.setTimeout(600_000);

t.test('registers as envhook, index 50 by default; SIGTERM: exit 0, the connection closed', async (t) => {
  const rt = await startFakeRuntime();
  t.teardown(() => rt.close());
  const p = startNriProcess(['--socket', rt.socketPath], { dir: t.testdir() });
  const peer = await rt.nextPlugin();
  t.same(
    [peer.name, peer.index, peer.events],
    ['envhook', '50', 0x1a],
    'events: CreateContainer, PostCreateContainer and StopPodSandbox (the owner watcher)',
  );
  t.match(
    await peer.createContainer({ pod: { uid: 'u' }, container: { name: 'c' } }),
    { adjust: { env: [], annotations: {} } },
    'the placeholder handler: an empty adjustment',
  );
  // stop() sends SIGKILL if SIGTERM has not ended it after a while: 0 is an exit of its own.
  t.equal(await p.stop(), 0, 'exit status 0');
  await peer.closed;
  t.equal(p.stderr(), '', 'nothing on stderr');
  t.match(
    p.log(),
    /"msg":"nri: start"[\s\S]*"runtime":"fake-runtime","runtimeVersion":"0.0".*"msg":"nri: registered"[\s\S]*"reason":"SIGTERM".*"msg":"nri: stopping"[\s\S]*"msg":"nri: stopped"/,
  );
  t.equal(p.log().match(/nri: registered/g)?.length, 1, 'registered: one line');
});

t.test(
  'the supervisor re-executes itself once, same PID, with one V8 thread and no JIT; its worker: the thread, the JIT; it serves',
  async (t) => {
    const rt = await startFakeRuntime();
    t.teardown(() => rt.close());
    const p = startNriProcess(['--socket', rt.socketPath], { dir: t.testdir() });
    t.teardown(() => p.stop());
    const peer = await rt.nextPlugin();
    const nodeOptions = (pid: number) =>
      fs
        .readFileSync(`/proc/${pid}/environ`, 'utf8')
        .split('\0')
        .find((e) => e.startsWith('NODE_OPTIONS='));
    t.match(
      nodeOptions(p.child.pid!),
      new RegExp(` ${DAEMON_NODE_OPTION} ${SUPERVISOR_NODE_OPTION}$`),
      'the supervisor, under the PID spawn gave, was started again with the options',
    );
    const { workerPid } = await p.waitForStatus((s) => s.connected);
    t.not(workerPid, p.child.pid, 'the worker is another process');
    t.match(nodeOptions(workerPid!), DAEMON_NODE_OPTION, 'the worker has the pool size');
    t.notMatch(nodeOptions(workerPid!), SUPERVISOR_NODE_OPTION, 'the worker has the JIT');
    t.match(await peer.createContainer({ pod: { uid: 'u' }, container: { name: 'c' } }), { adjust: { env: [] } });
    t.equal(await p.stop(), 0);
    t.equal(p.stderr(), '', 'nothing on stderr (no warning from the execve)');
    t.equal(p.log().match(/nri: start/g)?.length, 1, 'one start in the log: the execve comes before it');
  },
);

t.test('socket and index: flag over environment over config file', async (t) => {
  const dir = t.testdir();
  const [a, b, c] = [await startFakeRuntime(), await startFakeRuntime(), await startFakeRuntime()];
  t.teardown(async () => Promise.all([a.close(), b.close(), c.close()]));
  const config = path.join(dir, 'config.json');
  fs.writeFileSync(config, JSON.stringify({ nriSocket: c.socketPath, nriIndex: '70' }));
  const cases: [string[], NodeJS.ProcessEnv, typeof a, string][] = [
    [[], {}, c, '70'],
    [[], { ENVHOOK_NRI_SOCKET: b.socketPath, ENVHOOK_NRI_INDEX: '60' }, b, '60'],
    [['--socket', a.socketPath, '--index', '05'], { ENVHOOK_NRI_SOCKET: b.socketPath, ENVHOOK_NRI_INDEX: '60' }, a, '05'],
  ];
  for (const [args, env, rt, index] of cases) {
    const p = startNriProcess(args, { dir, env: { ENVHOOK_CONFIG: config, ...env } });
    const peer = await rt.nextPlugin();
    t.equal(peer.index, index, `index ${index} on the expected socket`);
    t.equal(await p.stop(), 0);
  }
});

t.test('a bad index or fd: one line, exit 1, nothing started', async (t) => {
  const dir = t.testdir({ 'config.json': '{}' });
  const env = { ENVHOOK_CONFIG: path.join(dir, 'config.json') };
  const cases: [string[], NodeJS.ProcessEnv, RegExp][] = [
    [['nri', '--index', '5'], env, /^envhook: --index "5": must be two digits, 00 to 99 \(the order among NRI plugins\)\n$/],
    [['nri', '--index', '5x'], env, /^envhook: --index "5x": /],
    [['nri'], { ...env, ENVHOOK_NRI_INDEX: '100' }, /^envhook: ENVHOOK_NRI_INDEX "100": /],
    [['nri'], { ...env, NRI_PLUGIN_SOCKET: 'three' }, /^envhook: NRI_PLUGIN_SOCKET is not a file descriptor number\n$/],
  ];
  for (const [args, e, re] of cases) {
    const r = envhook(args, { env: e });
    refused(t, r, re, args.join(' '));
  }
  const bad = envhook(['nri'], { env: { ENVHOOK_CONFIG: path.join(dir, 'c2.json') } });
  t.equal(bad.status, 1, 'a named config file that is missing');
  const long = envhook(['nri', '--socket', `/run/${'x'.repeat(110)}.sock`], { env });
  refused(
    t,
    long,
    'envhook: NRI socket path is 120 bytes: a unix socket path has at most 107\n',
    'a socket path longer than a unix socket path can be',
  );
});

t.test('the runtime restarts: the plugin dials again and registers anew', async (t) => {
  const dir = t.testdir();
  let rt = await startFakeRuntime();
  const socketPath = rt.socketPath;
  const sockDir = path.dirname(socketPath);
  const p = startNriProcess(['--socket', socketPath], { dir });
  t.teardown(async () => {
    await p.stop();
    await rt.close();
    fs.rmSync(sockDir, { recursive: true, force: true }); // given as dir below, so not removed by close()
  });
  await rt.nextPlugin();
  // Stop the runtime (socket gone), keep it down a while, then start it on the same path.
  await new Promise<void>((r) => {
    void rt.close().then(r);
  });
  fs.mkdirSync(sockDir, { recursive: true });
  await sleep(700);
  rt = await startFakeRuntime({ dir: sockDir });
  const back = Date.now();
  const peer = await rt.nextPlugin();
  const took = Date.now() - back;
  t.equal(peer.name, 'envhook');
  t.comment(`registered again ${took} ms after the runtime came back (backoff at most 1 s)`);
  t.match(p.log(), /"msg":"nri: disconnected"/);
  t.match(p.log(), /"code":"ENOENT","failures":1,.*"msg":"nri: NRI socket not reachable"/, 'the first failed dial is logged');
  t.equal(p.log().match(/NRI socket not reachable/g)?.length, 1, 'and not each of the following ones (at most once a minute)');
});

t.test('a bad peer: logged, connection closed, the daemon dials again and serves the next', async (t) => {
  const dir = t.testdir();
  const garbage = Buffer.from('000000010000000a00000000000000057700', 'hex');
  const rt = await startFakeRuntime();
  t.teardown(() => rt.close());
  const p = startNriProcess(['--socket', rt.socketPath], { dir });
  t.teardown(() => p.stop());
  const peer = await rt.nextPlugin();
  peer.socket.write(garbage);
  await peer.closed;
  await p.waitForLog(/unknown ttRPC message type 119.*NRI connection closed: protocol error/);
  const next = await rt.nextPlugin();
  t.match(await next.createContainer({ container: { name: 'c' } }), { adjust: {} }, 'the next session works');
  t.equal(p.child.exitCode, null, 'still running');
});

/** `envhook nri ARGS` from the built CLI until it exits (at most `ms`; then it is killed and the test fails). */
async function nriUntilExit(args: string[], env: NodeJS.ProcessEnv, ms = 30_000) {
  const child = spawn(NODE, [builtCli(), 'nri', ...args], { env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
  child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), ms);
  const [code, signal] = await new Promise<[number | null, string | null]>((resolve) => child.once('close', (c, s) => resolve([c, s])));
  clearTimeout(timer);
  return { status: signal === 'SIGKILL' ? `still running after ${ms} ms` : code, stdout, stderr };
}

t.test('any start-up failure: one line naming the setting or file and what is wrong, exit 1, nothing left running', async (t) => {
  const dir = t.testdir({ 'config.json': '{}', 'bad.json': '{\n  "nriIndex": "50",\n}\n', file: 'x', open: {} });
  fs.chmodSync(path.join(dir, 'open'), 0o777);
  const busy = net.createServer();
  await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
  t.teardown(() => busy.close());
  const port = (busy.address() as net.AddressInfo).port;
  // a unix socket path is short: not under the test's directory
  const sockDir = fs.mkdtempSync(path.join(os.tmpdir(), 'envhook-nri-'));
  t.teardown(() => fs.rmSync(sockDir, { recursive: true, force: true }));
  const socket = path.join(sockDir, 'nri.sock');
  const runDir = path.join(dir, 'run');
  const forms = 'expected host:port, [IPv6 or IPv4]:port or :port (every interface), port 0-65535';
  const config = { ENVHOOK_CONFIG: path.join(dir, 'config.json') };
  const cases: [string[], NodeJS.ProcessEnv, string][] = [
    [['--metrics-address', '127.0.0.1:99999'], config, `--metrics-address "127.0.0.1:99999": ${forms}`],
    [['--metrics-address', 'foo'], config, `--metrics-address "foo": ${forms}`],
    [['--metrics-address', '[192.0.2.300]:9901'], config, `--metrics-address "[192.0.2.300]:9901": ${forms}`],
    [[], { ...config, ENVHOOK_METRICS_ADDRESS: ':70000' }, `ENVHOOK_METRICS_ADDRESS ":70000": ${forms}`],
    [
      ['--metrics-address', `127.0.0.1:${port}`],
      config,
      `cannot listen on metrics address 127.0.0.1:${port}: address already in use (EADDRINUSE): another process listens there; choose a free port or stop that process`,
    ],
    [['--index', '5'], config, '--index "5": must be two digits, 00 to 99 (the order among NRI plugins)'],
    [[], { ENVHOOK_CONFIG: path.join(dir, 'bad.json') }, `config file ${path.join(dir, 'bad.json')}:3:1: not valid JSON`],
    [['--run-dir', path.join(dir, 'file')], config, `run directory ${path.join(dir, 'file')} is not a directory`],
    [
      ['--run-dir', '/proc/envhook-test/run'],
      config,
      'cannot create run directory /proc/envhook-test/run: no such file or directory (ENOENT)',
    ],
    [
      ['--run-dir', path.join(dir, 'open')],
      config,
      `run directory ${path.join(dir, 'open')} must be owned by root and not writable by group or others`,
    ],
  ];
  for (const [args, env, line] of cases) {
    const r = await nriUntilExit(['--socket', socket, '--run-dir', runDir, ...args], env);
    const what = `envhook nri ${args.join(' ')}${env.ENVHOOK_METRICS_ADDRESS ? ` (ENVHOOK_METRICS_ADDRESS)` : ''}`;
    refused(t, r, `envhook: ${line}\n`, what);
    t.equal(r.stdout, '');
    t.same(leftoverProcesses(socket), [], `${what}: no supervisor, no worker`);
    t.notOk(fs.existsSync(path.join(runDir, 'nri-status.json')), `${what}: no status file`);
    // the instance lock is free again: the abstract socket can be bound
    const lock = net.createServer();
    await new Promise<void>((resolve, reject) => lock.once('error', reject).listen(`\0${lockName(socket)}`, resolve));
    await new Promise<void>((resolve) => lock.close(() => resolve()));
  }
});
