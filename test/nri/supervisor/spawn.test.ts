// The supervisor's processes, started for real: a worker is this executable again (its Node
// flags, script and arguments) with its role, the daemon's V8 option, no NRI_PLUGIN_* unless it
// is handed the runtime's connection (then as its fd 3, closed in the supervisor), stdin and
// stdout to /dev/null, stderr shared, the IPC channel; its exit is its ChildProcess's. A
// worker under SCHED_FIFO when asked, a warning once when it cannot be. The runtime-started
// process hands the connection to a supervisor it starts and does not wait for.
//
// "This executable again" is a script written here that, run as a supervisor, calls spawn.ts
// and prints what happened (one JSON line an event), and run as what spawn.ts starts, prints
// what it was started with on its stderr and says hello on the connection it was handed.
import t, { type Test } from 'tap';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import type net from 'node:net';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { NODE, REPO } from '../../helpers/bundle.ts';
import { unixPair } from '../../helpers/unix-pair.ts';
import { findChrt } from '../../../src/nri/realtime.ts';

const url = (rel: string) => JSON.stringify(pathToFileURL(path.join(REPO, rel)).href);
const SELF = `
import fs from 'node:fs';
import net from 'node:net';
import { once } from 'node:events';
import { handOver, workerSpawner } from ${url('src/nri/supervisor/spawn.ts')};
import { threadPolicies } from ${url('test/helpers/proc.ts')};

const env = process.env;
const out = (o) => process.stdout.write(JSON.stringify(o) + '\\n');
// whether fd 3 is still the connection this process was given (a file opened later may take the number)
const inode = (fd) => { try { return fs.fstatSync(fd).ino; } catch { return null; } };
const connection = inode(3);
const holds = () => connection !== null && inode(3) === connection;
const log = Object.fromEntries(['debug', 'info', 'warn', 'error'].map((level) => [level, (o, msg) => out({ log: level, o: { ...o, err: o.err?.code }, msg })]));

if (env.ENVHOOK_NRI_WORKER !== undefined || env.ENVHOOK_NRI_HANDED !== undefined) {
  const fd = (n) => { try { return fs.readlinkSync('/proc/self/fd/' + n); } catch { return null; } };
  const keys = ['ENVHOOK_NRI_WORKER', 'ENVHOOK_NRI_HANDED', 'ENVHOOK_NRI_SUPERVISOR_OPTION', 'NODE_OPTIONS', 'NRI_PLUGIN_SOCKET', 'NRI_PLUGIN_NAME', 'NRI_PLUGIN_IDX', 'KEEP'];
  process.stdout.write('STARTED-STDOUT\\n');
  const seen = { pid: process.pid, argv: process.argv.slice(1), execArgv: process.execArgv, stdin: fd(0), stdout: fd(1), ipc: typeof process.send === 'function' };
  process.stderr.write('started ' + JSON.stringify({ ...seen, env: Object.fromEntries(keys.filter((k) => k in env).map((k) => [k, env[k]])) }) + '\\n');
  if (env.NRI_PLUGIN_SOCKET) fs.writeSync(Number(env.NRI_PLUGIN_SOCKET), 'hello from ' + process.pid + '\\n');
  if (process.send) {
    process.on('message', (code) => process.exit(Number(code)));
    process.send('ready');
  } else {
    // handed: until the runtime's connection closes
    new net.Socket({ fd: 3, readable: true }).on('close', () => process.exit(0)).resume();
  }
} else if (process.argv[2] === 'workers') {
  const c = JSON.parse(process.argv[3]);
  const spawner = workerSpawner({ role: { name: 'envhook', index: '50', preinstalled: c.fd !== undefined }, fd: c.fd, env: { PATH: env.PATH, ...c.env }, fifoPriority: c.fifo, log });
  for (const [i, want] of c.wants.entries()) {
    const child = spawner(want);
    out({ spawned: child.pid, holds: holds() });
    await once(child, 'message');
    out({ pid: child.pid, policies: threadPolicies(child.pid) });
    if (c.exits[i] === 'SIGTERM') child.kill('SIGTERM');
    else child.send(String(c.exits[i]));
    const [code, signal] = await once(child, 'exit');
    out({ exited: child.pid, code, signal });
  }
} else if (process.argv[2] === 'hand') {
  if (process.argv[3] === 'gone') process.execPath = '/nonexistent/node';
  handOver(3, { PATH: env.PATH, KEEP: 'yes' }, log);
  out({ holds: holds() });
}
`;

interface Run {
  code: number | null;
  events: Record<string, unknown>[];
  started: Record<string, unknown>[];
  stderr: string;
}

/**
 * Starts the script as a supervisor with `args`, `socket` as its fd 3: `exited` when it exits,
 * `done` when its stdout and stderr close too (what it started may hold its stderr longer).
 */
function startSupervisor(t: Test, args: string[], socket?: net.Socket): { exited: Promise<unknown>; done: Promise<Run> } {
  const self = path.join(t.testdir(), 'envhook-self.mjs');
  fs.writeFileSync(self, SELF);
  // through sh: NODE_OPTIONS, which tap sets on what a test spawns (its process-info hook), unset
  const child = spawn(
    '/bin/sh',
    ['-c', 'unset NODE_OPTIONS; exec "$0" "$@"', NODE, '--disable-warning=ExperimentalWarning', self, ...args],
    {
      env: { PATH: process.env.PATH },
      stdio: ['ignore', 'pipe', 'pipe', ...(socket ? [socket] : [])],
    },
  );
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => (stdout += d));
  child.stderr!.on('data', (d) => (stderr += d));
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  const lines = (text: string) => text.split('\n').filter(Boolean);
  const done = new Promise<Run>((resolve) =>
    child.on('close', (code) => {
      clearTimeout(timer);
      const started = lines(stderr).filter((l) => l.startsWith('started '));
      resolve({ code, events: lines(stdout).map((l) => JSON.parse(l)), started: started.map((l) => JSON.parse(l.slice(8))), stderr });
    }),
  );
  return { exited: new Promise((resolve) => child.once('exit', resolve)), done };
}
const supervisor = (t: Test, args: string[], socket?: net.Socket) => startSupervisor(t, args, socket).done;
const workers = (t: Test, c: Record<string, unknown>, socket?: net.Socket) => supervisor(t, ['workers', JSON.stringify(c)], socket);
const policies = (r: Run) => r.events.filter((e) => 'policies' in e).map((e) => [...new Set(e.policies as number[])]);
const logs = (r: Run) => r.events.filter((e) => 'log' in e);
const envOf = (r: Run, i: number) => r.started[i]!.env as Record<string, string>;

const SELF_ARGS = (t: Test, args: string[]) => [path.join(t.testdir(), 'envhook-self.mjs'), ...args];
const role = (preinstalled: boolean) => JSON.stringify({ name: 'envhook', index: '50', preinstalled });

t.test('a worker: this executable again, its role, the V8 option, no NRI_PLUGIN_*, stdio, IPC; its exit', async (t) => {
  const c = {
    env: {
      KEEP: 'yes',
      NODE_OPTIONS: '--max-old-space-size=200',
      NRI_PLUGIN_SOCKET: '9',
      NRI_PLUGIN_NAME: 'x',
      NRI_PLUGIN_IDX: '77',
      ENVHOOK_NRI_HANDED: '1',
    },
    wants: [true, false],
    exits: [7, 'SIGTERM'],
  };
  const r = await workers(t, c);
  t.equal(r.code, 0, 'the supervisor exits 0');
  t.equal(r.started.length, 2, 'two workers started');
  const [first, second] = r.started as { pid: number }[];
  t.same(first, {
    pid: first!.pid,
    argv: SELF_ARGS(t, ['workers', JSON.stringify(c)]),
    execArgv: ['--disable-warning=ExperimentalWarning'],
    stdin: '/dev/null',
    stdout: '/dev/null',
    ipc: true,
    env: { ENVHOOK_NRI_WORKER: role(false), NODE_OPTIONS: '--max-old-space-size=200 --v8-pool-size=1', KEEP: 'yes' },
  });
  t.same(second, { ...first, pid: second!.pid }, 'the next worker alike');
  t.notMatch(r.stderr + JSON.stringify(r.events), 'STARTED-STDOUT', "a worker's stdout goes nowhere");
  t.same(
    r.events.filter((e) => 'exited' in e),
    [
      { exited: first!.pid, code: 7, signal: null },
      { exited: second!.pid, code: null, signal: 'SIGTERM' },
    ],
    'each exit as its ChildProcess reports it',
  );
  t.same(policies(r), [[0], [0]], 'no --fifo-priority: ordinary');
  t.same(logs(r), [], 'nothing logged');
});

t.test("the runtime's connection: the first worker's fd 3, with NRI_PLUGIN_*; closed in the supervisor", async (t) => {
  const { client, server } = await unixPair(t);
  let said = '';
  client.on('data', (d) => (said += d));
  const ended = new Promise((resolve) => client.once('end', resolve));
  const c = { fd: 3, env: { NRI_PLUGIN_NAME: 'envhook', NRI_PLUGIN_IDX: '50' }, wants: [true, true], exits: [0, 0] };
  const running = workers(t, c, server);
  server.destroy(); // the supervisor's copy is the only one left
  const r = await running;
  t.equal(r.code, 0, 'the supervisor exits 0');
  t.same(envOf(r, 0), {
    ENVHOOK_NRI_WORKER: role(true),
    NODE_OPTIONS: '--v8-pool-size=1',
    NRI_PLUGIN_SOCKET: '3',
    NRI_PLUGIN_NAME: 'envhook',
    NRI_PLUGIN_IDX: '50',
  });
  t.equal(r.started[0]!.ipc, true, 'the IPC channel after the connection');
  t.same(envOf(r, 1), { ENVHOOK_NRI_WORKER: role(true), NODE_OPTIONS: '--v8-pool-size=1' }, 'the next worker: no connection');
  t.same(
    r.events.filter((e) => 'spawned' in e).map((e) => e.holds),
    [false, false],
    'the supervisor closed its fd 3 once the first worker had it',
  );
  await ended;
  t.equal(said, `hello from ${r.started[0]!.pid}\n`, 'the first worker spoke on the connection; its exit closed it');
});

t.test(
  '--fifo-priority: every thread of the worker under SCHED_FIFO; a refusal warned once',
  { skip: findChrt() ? false : 'no chrt' },
  async (t) => {
    // also NODE_OPTIONS without the V8 option, then with a pool size of the admin's: kept
    let r = await workers(t, { env: {}, fifo: 10, wants: [false], exits: [0] });
    const pid = r.started[0]!.pid;
    t.same(policies(r), [[1]], 'SCHED_FIFO');
    t.same(logs(r), [{ log: 'debug', o: { workerPid: pid, fifoPriority: 10 }, msg: 'nri: worker under SCHED_FIFO' }]);
    t.equal(envOf(r, 0).NODE_OPTIONS, '--v8-pool-size=1', 'NODE_OPTIONS unset: the V8 option alone');
    r = await workers(t, { env: { NODE_OPTIONS: '--v8-pool-size=2' }, fifo: 100, wants: [false, false], exits: [0, 0] });
    t.equal(logs(r).length, 1, 'warned once for two workers');
    t.match(logs(r)[0], {
      log: 'warn',
      o: { workerPid: r.started[0]!.pid, fifoPriority: 100 },
      msg: /^nri: worker left at ordinary priority: \S*chrt exited 1: /,
    });
    t.same(policies(r), [[0], [0]], 'both at ordinary priority');
    t.equal(envOf(r, 0).NODE_OPTIONS, '--v8-pool-size=2', "the admin's pool size kept");
  },
);

t.test("the supervisor's own V8 option (process.ts) is not the worker's", async (t) => {
  const env = { NODE_OPTIONS: '--max-old-space-size=200 --v8-pool-size=1 --jitless', ENVHOOK_NRI_SUPERVISOR_OPTION: '--jitless' };
  const r = await workers(t, { env, wants: [false], exits: [0] });
  t.same(
    envOf(r, 0),
    { ENVHOOK_NRI_WORKER: role(false), NODE_OPTIONS: '--max-old-space-size=200 --v8-pool-size=1' },
    "neither the supervisor's option nor its marker",
  );
});

t.test('handing over: a supervisor with the connection as fd 3, not waited for', async (t) => {
  const { client, server } = await unixPair(t);
  let said = '';
  const hello = new Promise<void>((resolve) => client.on('data', (d) => (said += d).endsWith('\n') && resolve()));
  const { exited, done } = startSupervisor(t, ['hand'], server);
  server.destroy();
  await Promise.all([exited, hello]);
  const pid = Number(/^hello from (\d+)\n$/.exec(said)![1]);
  t.notMatch(
    fs.readFileSync(`/proc/${pid}/stat`, 'utf8'),
    /^\d+ \(.*\) Z /,
    'the process that handed over has exited; its supervisor runs',
  );
  client.end(); // the runtime closes its side: that supervisor (this script) ends
  const r = await done;
  t.equal(r.code, 0, 'the process that handed over exited 0');
  t.same(r.started, [
    {
      pid,
      argv: SELF_ARGS(t, ['hand']),
      execArgv: ['--disable-warning=ExperimentalWarning'],
      stdin: '/dev/null',
      stdout: '/dev/null',
      ipc: false,
      env: { ENVHOOK_NRI_HANDED: '1', NRI_PLUGIN_SOCKET: '3', KEEP: 'yes' },
    },
  ]);
  t.same(r.events, [
    { log: 'debug', o: { supervisorPid: pid }, msg: "nri: the runtime's connection handed to the supervisor" },
    { holds: false },
  ]);
});

t.test('handing over when this executable is gone: logged, the connection closed', async (t) => {
  const { client, server } = await unixPair(t);
  const ended = new Promise((resolve) => client.once('end', resolve));
  const running = supervisor(t, ['hand', 'gone'], server);
  server.destroy();
  const r = await running;
  t.equal(r.code, 0, 'the process that handed over exited 0');
  t.same(r.events, [
    { log: 'debug', o: {}, msg: "nri: the runtime's connection handed to the supervisor" },
    { holds: false },
    { log: 'error', o: { err: 'ENOENT' }, msg: 'nri: the supervisor could not be started' },
  ]);
  await ended;
  t.pass('the runtime sees its connection closed');
});
