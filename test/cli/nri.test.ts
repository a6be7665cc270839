// `envhook nri` as a process: settings (flag, environment, config file), reconnecting with
// backoff, surviving a bad peer, a clean exit on SIGTERM, the V8 option of supervisor and worker.
// The supervisor's own cases: nri-supervisor.test.ts.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { envhook } from '../helpers/bundle.ts';
import { startFakeRuntime } from '../helpers/nri-runtime.ts';
import { startNriProcess } from '../helpers/nri-process.ts';
import { DAEMON_NODE_OPTION } from '../../src/nri/process.ts';
import { sleep } from '../helpers/wait.ts';

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

t.test('the supervisor re-executes itself once, same PID, with one V8 worker thread; its worker has it too, and serves', async (t) => {
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
    new RegExp(` ${DAEMON_NODE_OPTION}$`),
    'the supervisor, under the PID spawn gave, was started again with the option',
  );
  const { workerPid } = await p.waitForStatus((s) => s.connected);
  t.not(workerPid, p.child.pid, 'the worker is another process');
  t.match(nodeOptions(workerPid!), new RegExp(DAEMON_NODE_OPTION), 'the worker has the option');
  t.match(await peer.createContainer({ pod: { uid: 'u' }, container: { name: 'c' } }), { adjust: { env: [] } });
  t.equal(await p.stop(), 0);
  t.equal(p.stderr(), '', 'nothing on stderr (no warning from the execve)');
  t.equal(p.log().match(/nri: start/g)?.length, 1, 'one start in the log: the execve comes before it');
});

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
    [['nri', '--index', '5'], env, /^envhook: --index: .*\n$/],
    [['nri', '--index', '5x'], env, /^envhook: --index: /],
    [['nri'], { ...env, ENVHOOK_NRI_INDEX: '100' }, /^envhook: ENVHOOK_NRI_INDEX: /],
    [['nri'], { ...env, NRI_PLUGIN_SOCKET: 'three' }, /^envhook: NRI_PLUGIN_SOCKET is not a file descriptor number\n$/],
  ];
  for (const [args, e, re] of cases) {
    const r = envhook(args, { env: e });
    t.equal(r.status, 1, args.join(' '));
    t.match(r.stderr, re);
    t.equal(r.stderr.split('\n').length, 2, 'one line');
  }
  const bad = envhook(['nri'], { env: { ENVHOOK_CONFIG: path.join(dir, 'c2.json') } });
  t.equal(bad.status, 1, 'a named config file that is missing');
  const long = envhook(['nri', '--socket', `/run/${'x'.repeat(110)}.sock`], { env });
  t.equal(long.status, 1, 'a socket path longer than a unix socket path can be');
  t.equal(long.stderr, 'envhook: NRI socket path is 120 bytes: a unix socket path has at most 107\n');
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
