// `envhook nri` as a process: settings (flag, environment, config file), the runtime's fd,
// reconnecting with backoff, surviving a bad peer, a clean exit on SIGTERM; the supervisor:
// a killed or hung worker replaced, no worker without its supervisor, one instance per socket,
// the status file, stderr logs, missed containers found at Synchronize.
import t from 'tap';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { envhook, NODE, REPO } from '../helpers/bundle.ts';
import { startFakeRuntime } from '../helpers/nri-runtime.ts';
import { startNriProcess } from '../helpers/nri-process.ts';
import { DAEMON_NODE_OPTION } from '../../src/nri/process.ts';

t.test('registers as envhook, index 50 by default; SIGTERM: exit 0, the connection closed', async (t) => {
  const rt = await startFakeRuntime();
  t.teardown(() => rt.close());
  const p = startNriProcess(['--socket', rt.socketPath], { dir: t.testdir() });
  const peer = await rt.nextPlugin();
  t.same([peer.name, peer.index, peer.events], ['envhook', '50', 0xa], 'events: CreateContainer and StopPodSandbox (the owner watcher)');
  t.match(await peer.createContainer({ pod: { uid: 'u' }, container: { name: 'c' } }), { adjust: { env: [], annotations: {} } }, 'the placeholder handler: an empty adjustment');
  const started = Date.now();
  t.equal(await p.stop(), 0, 'exit status 0');
  t.ok(Date.now() - started < 2000, `stopped in ${Date.now() - started} ms`);
  await peer.closed;
  t.equal(p.stderr(), '', 'nothing on stderr');
  t.match(p.log(), /"msg":"nri: start"[\s\S]*"runtime":"fake-runtime","runtimeVersion":"0.0".*"msg":"nri: registered"[\s\S]*"reason":"SIGTERM".*"msg":"nri: stopping"[\s\S]*"msg":"nri: stopped"/);
  t.equal(p.log().match(/nri: registered/g)?.length, 1, 'registered: one line');
});

t.test('the supervisor re-executes itself once, same PID, with one V8 worker thread; its worker has it too, and serves', async (t) => {
  const rt = await startFakeRuntime();
  t.teardown(() => rt.close());
  const p = startNriProcess(['--socket', rt.socketPath], { dir: t.testdir() });
  const peer = await rt.nextPlugin();
  const nodeOptions = (pid: number) => fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').find((e) => e.startsWith('NODE_OPTIONS='));
  t.match(nodeOptions(p.child.pid!), new RegExp(` ${DAEMON_NODE_OPTION}$`), 'the supervisor, under the PID spawn gave, was started again with the option');
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
  await new Promise((r) => setTimeout(r, 700));
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

t.test('NRI_PLUGIN_SOCKET: the inherited connection, named by NRI_PLUGIN_NAME/IDX; when it closes and the socket is not there: exit 0', async (t) => {
  const dir = t.testdir();
  const rt = await startFakeRuntime();
  t.teardown(() => rt.close());
  const conn = await connect(rt.socketPath);
  const p = startNriProcess(['--socket', path.join(path.dirname(rt.socketPath), 'nonexistent.sock')], {
    dir,
    env: { NRI_PLUGIN_SOCKET: '3', NRI_PLUGIN_NAME: 'envhook', NRI_PLUGIN_IDX: '42', NODE_OPTIONS: DAEMON_NODE_OPTION },
    stdio: ['ignore', 'ignore', 'pipe', conn],
  });
  conn.destroy(); // the child holds its own copy of the descriptor
  const peer = await rt.nextPlugin();
  t.same([peer.name, peer.index], ['envhook', '42']);
  const { pid, workerPid } = await p.waitForStatus((s) => s.connected);
  t.teardown(() => void (alive(pid) && process.kill(pid, 'SIGKILL')));
  peer.socket.destroy();
  for (let i = 0; i < 400 && (alive(pid) || alive(workerPid!)); i++) await new Promise((r) => setTimeout(r, 25));
  t.notOk(alive(pid), "the runtime's socket is not there: the runtime is gone, the supervisor ended");
  t.match(p.log(), /the runtime's NRI socket is gone: ending/);
  t.match(p.log(), /"msg":"nri: stopped"/, 'with status 0, as its last line says');
  t.notOk(alive(workerPid!), 'no worker left');
  t.notMatch(p.log(), /NRI socket not reachable/);
});

t.test('NRI_PLUGIN_SOCKET: killed, the worker is replaced by one that dials the socket as an external plugin with the same name; the runtime killing the process it started changes nothing', async (t) => {
  const dir = t.testdir();
  const rt = await startFakeRuntime();
  t.teardown(() => rt.close());
  const conn = await connect(rt.socketPath);
  const p = startNriProcess(['--socket', rt.socketPath], {
    dir,
    env: { NRI_PLUGIN_SOCKET: '3', NRI_PLUGIN_NAME: 'envhook', NRI_PLUGIN_IDX: '42', NODE_OPTIONS: DAEMON_NODE_OPTION },
    stdio: ['ignore', 'ignore', 'pipe', conn],
  });
  conn.destroy();
  const first = await rt.nextPlugin();
  const { pid, workerPid } = await p.waitForStatus((s) => s.connected);
  t.teardown(() => void (alive(pid) && process.kill(pid, 'SIGTERM')));
  process.kill(workerPid!, 'SIGKILL');
  t.equal(await first.closed.then(() => 'closed'), 'closed', "the runtime's connection closed with the worker");
  // NRI then kills the process it started (removeClosedPlugins → stop: SIGKILL), as containerd does.
  p.child.kill('SIGKILL');
  t.equal(await p.exited, 0, 'the process the runtime started had handed its connection over and exited 0');
  t.not(pid, p.child.pid, 'the supervisor is another process');
  const second = await rt.nextPlugin();
  t.same([second.name, second.index], ['envhook', '42'], 're-registered under the same name and index');
  const s = await p.waitForStatus((st) => st.connected && st.workerPid !== workerPid);
  t.match(s, { counts: { registrations: 2, workerRestarts: 1, hangs: 0 }, socket: rt.socketPath }, 'status: two registrations, one restart, now on the socket');
  t.match(p.log(), /"signal":"SIGKILL".*"msg":"nri: worker exited: starting another"/);
});

t.test('a worker killed over and over is replaced each time, never two registered at once', async (t) => {
  const rt = await startFakeRuntime();
  t.teardown(() => rt.close());
  const p = startNriProcess(['--socket', rt.socketPath], { dir: t.testdir() });
  t.teardown(() => p.stop());
  let peer = await rt.nextPlugin();
  for (let i = 0; i < 5; i++) {
    const { workerPid } = await p.waitForStatus((s) => s.connected && s.workerPid !== undefined);
    process.kill(workerPid!, 'SIGKILL');
    const closed = peer.closed.then(() => true);
    peer = await rt.nextPlugin();
    t.ok(await Promise.race([closed, Promise.resolve(false)]), `kill ${i + 1}: the previous connection had closed when the next registered`);
  }
  t.match(await p.waitForStatus((s) => s.connected && s.counts.registrations === 6), { counts: { workerRestarts: 5 } });
});

t.test('a hung worker (SIGSTOP) is killed and replaced', async (t) => {
  const rt = await startFakeRuntime();
  t.teardown(() => rt.close());
  const p = startNriProcess(['--socket', rt.socketPath], { dir: t.testdir() });
  t.teardown(() => p.stop());
  const first = await rt.nextPlugin();
  const { workerPid } = await p.waitForStatus((s) => s.connected);
  process.kill(workerPid!, 'SIGSTOP');
  await first.closed;
  const second = await rt.nextPlugin();
  t.equal(second.name, 'envhook', 'another worker registered');
  t.notOk(alive(workerPid!), 'the stopped worker was killed, not left stopped');
  t.match(await p.waitForStatus((s) => s.connected && s.counts.hangs === 1), { counts: { registrations: 2, workerRestarts: 1 } });
  t.match(p.log(), /"msg":"nri: worker not answering \(hung or stopped\): killed, to be replaced"/);
});

t.test('the supervisor killed: its worker ends too (no orphan registered)', async (t) => {
  const rt = await startFakeRuntime();
  t.teardown(() => rt.close());
  const p = startNriProcess(['--socket', rt.socketPath], { dir: t.testdir() });
  const peer = await rt.nextPlugin();
  const { workerPid } = await p.waitForStatus((s) => s.connected);
  p.child.kill('SIGKILL');
  await peer.closed;
  for (let i = 0; i < 200 && alive(workerPid!); i++) await new Promise((r) => setTimeout(r, 25));
  t.notOk(alive(workerPid!), 'the worker is gone');
});

t.test('a second envhook nri on the same socket takes over: the first stops, one registration at a time', async (t) => {
  const dir = t.testdir();
  const rt = await startFakeRuntime();
  t.teardown(() => rt.close());
  const a = startNriProcess(['--socket', rt.socketPath], { dir });
  t.teardown(() => a.stop());
  const first = await rt.nextPlugin();
  const b = startNriProcess(['--socket', rt.socketPath], { dir });
  t.teardown(() => b.stop());
  const closed = first.closed.then(() => true);
  const second = await rt.nextPlugin();
  t.ok(await Promise.race([closed, Promise.resolve(false)]), "the first's connection had closed before the second registered");
  t.equal(second.name, 'envhook');
  t.equal(await a.exited, 0, 'the first exits 0');
  t.match(a.log(), /"msg":"nri: a newer envhook nri takes over"/);
  t.match(b.log(), /"msg":"nri: took over from the envhook nri that was running"/);
});

t.test('without --log-file the daemon logs JSON lines to stderr', async (t) => {
  const dir = t.testdir({ 'config.json': '{}' });
  const rt = await startFakeRuntime();
  t.teardown(() => rt.close());
  const child = spawn(NODE, [path.join(REPO, 'src/cli/main.ts'), 'nri', '--socket', rt.socketPath], {
    env: { PATH: process.env.PATH, ENVHOOK_CONFIG: path.join(dir, 'config.json'), ENVHOOK_RUN_DIR: path.join(dir, 'run') },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let [out, err] = ['', ''];
  child.stdout.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr.on('data', (b: Buffer) => (err += b.toString()));
  await rt.nextPlugin();
  for (let i = 0; i < 200 && !/nri: registered/.test(err); i++) await new Promise((r) => setTimeout(r, 25));
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
  const lines = err.split('\n').filter(Boolean);
  t.ok(lines.length >= 3, `${lines.length} lines`);
  for (const l of lines) t.doesNotThrow(() => JSON.parse(l), 'a JSON line');
  t.same(lines.map((l) => (JSON.parse(l) as { msg: string }).msg).filter((m) => /^nri: (start|registered|stopped)$/.test(m)), ['nri: start', 'nri: registered', 'nri: stopped']);
  t.equal(out, '', 'nothing on stdout');
});

t.test('Synchronize: a container of an envhook pod without the applied mark is reported once, with names only', async (t) => {
  const env = JSON.stringify({ app: [{ name: 'X', value: 'canary-sync-value' }] });
  const pod = { id: 's1', name: 'web', namespace: 'ns', uid: 'u1', annotations: { 'envhook.io/env': env } };
  const rt = await startFakeRuntime({
    synchronize: () => [
      {
        pods: [pod, { id: 's2', name: 'plain', namespace: 'ns', uid: 'u2', annotations: {} }],
        containers: [
          { id: 'c-missed', podSandboxId: 's1', name: 'app', state: 3, annotations: {} },
          { id: 'c-other', podSandboxId: 's1', name: 'sidecar', state: 3, annotations: {} },
          { id: 'c-plain', podSandboxId: 's2', name: 'app', state: 3, annotations: {} },
          { id: 'c-stopped', podSandboxId: 's1', name: 'app', state: 4, annotations: {} },
        ],
        more: false,
      },
    ],
  });
  t.teardown(() => rt.close());
  const p = startNriProcess(['--socket', rt.socketPath], { dir: t.testdir() });
  t.teardown(() => p.stop());
  const peer = await rt.nextPlugin();
  const s = await p.waitForStatus((st) => st.counts.missed === 1);
  t.equal(s.counts.missed, 1, 'only the running container the annotation names');
  await p.waitForLog(/"container":"app","id":"c-missed","pod":"web","namespace":"ns","podUid":"u1".*"msg":"nri: container runs without envhook/);
  // Reconnect: the same container is not reported again.
  peer.socket.destroy();
  await rt.nextPlugin();
  await p.waitForStatus((st) => st.connected && st.counts.registrations === 2);
  t.equal(p.status()!.counts.missed, 1, 'reported once across sessions');
  t.equal(p.log().match(/container runs without envhook/g)?.length, 1);
  t.notMatch(p.log() + JSON.stringify(p.status()), 'canary-sync-value', 'no value anywhere');
});

async function connect(socketPath: string): Promise<net.Socket> {
  const conn = net.createConnection(socketPath);
  await new Promise((r) => conn.once('connect', r));
  return conn;
}

const alive = (pid: number): boolean => {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/^\d+ \(.*\) Z/.test(stat);
  } catch {
    return false;
  }
};

t.test('--metrics-address: readiness is registration, metrics count what the worker did, both survive a worker restart; envhook status agrees', async (t) => {
  const dir = t.testdir();
  const rt = await startFakeRuntime();
  t.teardown(() => rt.close());
  const port = await freePort();
  const p = startNriProcess(['--socket', rt.socketPath, '--metrics-address', `127.0.0.1:${port}`], { dir });
  t.teardown(() => p.stop());
  const peer = await rt.nextPlugin();
  await p.waitForStatus((s) => s.connected);
  const get = async (url: string) => {
    const r = await fetch(`http://127.0.0.1:${port}${url}`);
    return { status: r.status, text: await r.text() };
  };
  t.equal((await get('/readyz')).status, 200, 'ready: registered');
  await peer.createContainer({ pod: { uid: 'u' }, container: { name: 'c' } });
  await p.waitForStatus((s) => s.counts.empty === 1);
  const metrics = (await get('/metrics')).text;
  t.match(metrics, /^envhook_nri_connected 1$/m);
  t.match(metrics, /^envhook_nri_requests_total\{result="empty"\} 1$/m);
  t.match(metrics, /^envhook_nri_request_duration_seconds_count 1$/m);
  const status = envhook(['status', '--json', '--root', '/', '--prefix', path.join(dir, 'none'), '--run-dir', p.runDir]);
  t.equal(status.status, 0, `envhook status: connected (${status.stderr})`);
  t.match(JSON.parse(status.stdout), { nri: 'connected', status: { connected: true, plugin: '50-envhook' } });
  const { workerPid } = p.status()!;
  process.kill(workerPid!, 'SIGKILL');
  await p.waitForStatus((s) => !s.connected);
  t.equal((await get('/healthz')).status, 200, 'live while the worker is replaced');
  await rt.nextPlugin();
  await p.waitForStatus((s) => s.connected && s.workerPid !== workerPid);
  t.match((await get('/metrics')).text, /^envhook_nri_worker_restarts_total 1$/m);
  t.equal((await get('/readyz')).status, 200, 'ready again');
});

async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as net.AddressInfo;
  await new Promise((r) => s.close(r));
  return port;
}
