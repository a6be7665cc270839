// `envhook nri`'s supervisor as a process against the test peer: the runtime's connection handed
// to the first worker, a killed or hung worker replaced, no worker without its supervisor, one
// instance per socket (takeover), stderr logs, containers missed while away reported once, the
// metrics and health endpoint, and what install and uninstall do to a running plugin.
import t, { type Test } from 'tap';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { builtCli, envhook, NODE } from '../../helpers/bundle.ts';
import { startFakeRuntime } from '../../helpers/nri/runtime.ts';
import { findChrt, schedPolicy } from '../../../src/nri/realtime.ts';
import { alive, freePort, startNriProcess } from '../../helpers/nri/process.ts';
import { install, installRoot, uninstall } from '../../helpers/install/install.ts';
import { DAEMON_NODE_OPTION } from '../../../src/nri/process.ts';
import { sleep } from '../../helpers/wait.ts';

t.setTimeout(600_000);

t.test(
  'NRI_PLUGIN_SOCKET: the inherited connection, named by NRI_PLUGIN_NAME/IDX; when it closes and the socket is not there: exit 0',
  async (t) => {
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
    for (let i = 0; i < 400 && (alive(pid) || alive(workerPid!)); i++) await sleep(25);
    t.notOk(alive(pid), "the runtime's socket is not there: the runtime is gone, the supervisor ended");
    t.match(p.log(), /the runtime's NRI socket is gone: ending/);
    t.match(p.log(), /"msg":"nri: stopped"/, 'with status 0, as its last line says');
    t.notOk(alive(workerPid!), 'no worker left');
    t.notMatch(p.log(), /NRI socket not reachable/);
  },
);

t.test(
  'NRI_PLUGIN_SOCKET: killed, the worker is replaced by one that dials the socket as an external plugin with the same name; the runtime killing the process it started changes nothing',
  async (t) => {
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
    t.match(
      s,
      { counts: { registrations: 2, workerRestarts: 1, hangs: 0 }, socket: rt.socketPath },
      'status: two registrations, one restart, now on the socket',
    );
    t.match(p.log(), /"signal":"SIGKILL".*"msg":"nri: worker exited: starting another"/);
  },
);

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
    t.ok(
      await Promise.race([closed, Promise.resolve(false)]),
      `kill ${i + 1}: the previous connection had closed when the next registered`,
    );
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
  for (let i = 0; i < 200 && alive(workerPid!); i++) await sleep(25);
  t.notOk(alive(workerPid!), 'the worker is gone');
});

t.test('a second envhook nri on the same socket takes over with no window: it registers, then the first leaves and exits 0', async (t) => {
  const dir = t.testdir();
  const runDir = path.join(dir, 'run');
  const rt = await startFakeRuntime();
  t.teardown(() => rt.close());
  const a = startNriProcess(['--socket', rt.socketPath], { dir, runDir });
  t.teardown(() => a.stop());
  const first = await rt.nextPlugin();
  const b = startNriProcess(['--socket', rt.socketPath], { dir, runDir });
  t.teardown(() => b.stop());
  let firstClosed = false;
  void first.closed.then(() => (firstClosed = true));
  const second = await rt.nextPlugin();
  t.notOk(firstClosed, 'the first still registered when the second registers: never neither');
  t.equal(second.name, 'envhook');
  await first.closed;
  t.equal(await a.exited, 0, 'the first exits 0 once it handed over');
  t.match(a.log(), /"msg":"nri: a newer envhook nri serves beside this one[^"]*"[\s\S]*"msg":"nri: handed over"/);
  t.match(b.log(), /"yielded":true,"msg":"nri: took over from the envhook nri that was running"/);
  t.match(b.status(), { pid: b.child.pid, connected: true }, "the status file is the second's");
});

t.test('one socket by two paths (a symlinked directory): one lock, the second takes over', async (t) => {
  const dir = t.testdir();
  const rt = await startFakeRuntime();
  t.teardown(() => rt.close());
  // Short: a unix socket path has at most 107 bytes.
  const link = `${path.dirname(rt.socketPath)}-link`;
  fs.symlinkSync(path.dirname(rt.socketPath), link);
  t.teardown(() => fs.rmSync(link));
  const a = startNriProcess(['--socket', rt.socketPath], { dir });
  t.teardown(() => a.stop());
  await rt.nextPlugin();
  const b = startNriProcess(['--socket', path.join(link, 'nri.sock')], { dir });
  t.teardown(() => b.stop());
  await rt.nextPlugin();
  t.equal(await a.exited, 0, 'the first exits 0');
  t.match(a.log(), /"msg":"nri: handed over"/);
});

t.test("two runtimes' sockets at one path in two mount namespaces: two locks, neither asked to stop", async (t) => {
  const dir = t.testdir();
  const [rtA, rtB] = [await startFakeRuntime(), await startFakeRuntime()];
  t.teardown(() => Promise.all([rtA.close(), rtB.close()]));
  const a = startNriProcess(['--socket', rtA.socketPath], { dir });
  t.teardown(() => a.stop());
  const first = await rtA.nextPlugin();
  let firstClosed = false;
  void first.closed.then(() => (firstClosed = true));
  // b sees runtime B's directory at runtime A's path: a private mount namespace, the same network namespace.
  const bind = ['unshare', '-m', '--propagation', 'private', 'sh', '-c', 'mount --bind "$1" "$2" && shift 2 && exec "$@"', 'sh'];
  const b = startNriProcess(['--socket', rtA.socketPath], {
    dir,
    prefix: [...bind, path.dirname(rtB.socketPath), path.dirname(rtA.socketPath)],
  });
  t.teardown(() => b.stop());
  const second = await rtB.nextPlugin();
  t.same([second.name, second.index], ['envhook', '50'], "b registered with runtime B through runtime A's path");
  await b.waitForStatus((s) => s.connected);
  await sleep(300);
  t.notOk(firstClosed, 'a is still registered with runtime A');
  t.ok(alive(a.child.pid!), 'a runs');
  t.notMatch(a.log(), /asked to stop|takes over/);
  t.notMatch(b.log(), /took over/);
});

t.test('without --log-file the daemon logs JSON lines to stderr', async (t) => {
  const dir = t.testdir({ 'config.json': '{}' });
  const rt = await startFakeRuntime();
  t.teardown(() => rt.close());
  const child = spawn(NODE, [builtCli(), 'nri', '--socket', rt.socketPath], {
    env: { PATH: process.env.PATH, ENVHOOK_CONFIG: path.join(dir, 'config.json'), ENVHOOK_RUN_DIR: path.join(dir, 'run') },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let [out, err] = ['', ''];
  child.stdout.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr.on('data', (b: Buffer) => (err += b.toString()));
  await rt.nextPlugin();
  for (let i = 0; i < 200 && !/nri: registered/.test(err); i++) await sleep(25);
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
  const lines = err.split('\n').filter(Boolean);
  t.ok(lines.length >= 3, `${lines.length} lines`);
  for (const l of lines) t.doesNotThrow(() => JSON.parse(l), 'a JSON line');
  t.same(
    lines.map((l) => (JSON.parse(l) as { msg: string }).msg).filter((m) => /^nri: (start|registered|stopped)$/.test(m)),
    ['nri: start', 'nri: registered', 'nri: stopped'],
  );
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
  await p.waitForLog(
    /"container":"app","id":"c-missed","pod":"web","namespace":"ns","podUid":"u1".*"msg":"nri: container runs without envhook/,
  );
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

t.test(
  '--metrics-address: readiness is registration, metrics count what the worker did, both survive a worker restart; envhook status agrees',
  async (t) => {
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
  },
);

t.test('uninstall of the NRI plugin stops the envhook nri running for the socket its wrapper names', async (t) => {
  const rt = await startFakeRuntime();
  t.teardown(() => rt.close());
  const { root, source } = installRoot(t, { 'etc/crio/crio.conf': `[crio.nri]\nnri_listen = ${JSON.stringify(rt.socketPath)}\n` });
  underRoot(t, root, path.dirname(rt.socketPath));
  const noCrio = { ...process.env, PATH: '/nonexistent' };
  t.equal(install({ runtime: 'crio', root, source, extra: ['--mode', 'nri'], env: noCrio }).status, 0);
  const p = startNriProcess(['--socket', rt.socketPath], { dir: path.dirname(root) });
  t.teardown(() => p.stop());
  const peer = await rt.nextPlugin();
  const u = uninstall({ runtime: 'crio', root, extra: ['--mode', 'nri'] });
  t.equal(u.status, 0, u.stderr);
  t.match(u.stdout, new RegExp(`^stopped the running envhook nri for ${rt.socketPath} \\(pid ${p.child.pid}\\)$`, 'm'));
  await peer.closed;
  t.equal(await p.exited, 0, 'the plugin exited 0');
  t.match(p.log(), /"msg":"nri: asked to stop"/);
  const again = uninstall({ runtime: 'crio', root, extra: ['--mode', 'nri'] });
  t.notMatch(again.stdout, /stopped/, 'nothing installed, nothing to stop');
});

t.test(
  'install over a running envhook nri not started from a plugin file: it refuses the upgrade, install says which pid runs the previous files',
  async (t) => {
    const rt = await startFakeRuntime();
    t.teardown(() => rt.close());
    const { root, source } = installRoot(t, { 'etc/crio/crio.conf': `[crio.nri]\nnri_listen = ${JSON.stringify(rt.socketPath)}\n` });
    underRoot(t, root, path.dirname(rt.socketPath));
    const noCrio = { ...process.env, PATH: '/nonexistent' };
    const p = startNriProcess(['--socket', rt.socketPath], { dir: path.dirname(root) });
    t.teardown(() => p.stop());
    await rt.nextPlugin();
    const r = install({ runtime: 'crio', root, source, extra: ['--mode', 'nri'], env: noCrio });
    t.equal(r.status, 0, r.stderr);
    t.match(
      r.stdout,
      `note: envhook nri (pid ${p.child.pid}) is running for ${rt.socketPath} from the files before this install (it refused the upgrade: not started from a plugin file): it goes on until crio restarts (systemctl restart crio); the new one then takes over from it`,
    );
    t.match(r.stdout, /^next:\n {2}restart CRI-O: /m, 'the restart still to do');
    t.equal(p.child.exitCode, null, 'the request stopped nothing');
  },
);

t.test(
  '--fifo-priority: each worker it starts runs under SCHED_FIFO, the supervisor stays ordinary',
  { skip: findChrt('') ? false : 'no chrt (util-linux) on this machine' },
  async (t) => {
    const rt = await startFakeRuntime();
    t.teardown(() => rt.close());
    const p = startNriProcess(['--socket', rt.socketPath, '--fifo-priority', '10'], { dir: t.testdir() });
    t.teardown(() => p.stop());
    await rt.nextPlugin();
    const first = (await p.waitForStatus((s) => s.connected && s.workerPid !== undefined)).workerPid!;
    t.equal(schedPolicy(first), 1, 'the worker: SCHED_FIFO');
    t.equal(schedPolicy(p.child.pid!), 0, 'the supervisor: ordinary');
    process.kill(first, 'SIGKILL');
    await rt.nextPlugin();
    const next = (await p.waitForStatus((s) => s.connected && s.workerPid !== undefined && s.workerPid !== first)).workerPid!;
    t.equal(schedPolicy(next), 1, 'its successor too');
    t.notMatch(p.log(), 'left at ordinary priority');
  },
);

t.test('--fifo-priority out of range: one line, exit 1', async (t) => {
  const p = startNriProcess(['--socket', '/nonexistent/nri.sock', '--fifo-priority', '100'], { dir: t.testdir() });
  t.equal(await p.exited, 1);
  t.equal(p.stderr(), 'envhook: --fifo-priority: must be a SCHED_FIFO priority, 1 to 99\n');
});

/**
 * The runtime's socket directory `dir` seen under the node root `root` as well (a bind mount, as
 * the installer's --root /host sees the host's): install and uninstall find the running instance
 * by what the socket is, under --root.
 */
function underRoot(t: Test, root: string, dir: string): void {
  const at = path.join(root, dir);
  fs.mkdirSync(at, { recursive: true });
  t.equal(spawnSync('mount', ['--bind', dir, at]).status, 0, `${dir} bind-mounted under the root`);
  t.teardown(() => void spawnSync('umount', [at]));
}
