// The NRI socket check: for each NRI install, the socket the runtime's own reading names
// (containerd's socket_path from `config dump`, CRI-O's nri_listen from `crio config`; NRI's
// default otherwise), else the socket a running plugin dials; there when it is a socket. Real
// Unix sockets (listening, and one left by a killed process), a regular file in the way, the
// real containerd (Debian's; sid's 2.x where cached) and the crio double.
import t, { type Test } from 'tap';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { readNode, type NodeView, type RecordedInstall } from '../../src/doctor/node.ts';
import { nriSocketChecks } from '../../src/doctor/nri-socket-check.ts';
import type { PluginView } from '../../src/doctor/plugin-state.ts';
import { CONTAINERD, NODE } from '../helpers/bundle.ts';
import { crioDouble } from '../helpers/install/crio.ts';
import { sidContainerd } from '../helpers/install/containerd-sid.ts';
import { sampleStatus } from '../helpers/nri/status.ts';

const SID = await sidContainerd();
const noSid = { skip: 'missing' in SID ? SID.missing : false };

const PREFIX = '/usr/local/lib/envhook';
const CONFIG = '/etc/containerd/config.toml';
const NOT_THERE = ': the runtime has not started NRI (off, or not restarted since install)';
const RESTART = 'restart the runtime (systemctl restart containerd, or crio)';
const nri = (runtime: string) =>
  ({ runtime, mode: 'nri', record: { config: CONFIG, files: {}, blocks: [] } }) as unknown as RecordedInstall;
const running: PluginView = { state: 'connected', runsAs: 'daemonset', problem: null };
const none: PluginView = { state: 'absent', runsAs: null, problem: null };

/** A root short enough for a socket path under it (107 bytes). */
function shortRoot(t: Test, files: Record<string, string> = {}): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'envhook-nri-socket-'));
  t.teardown(() => fs.rmSync(root, { recursive: true, force: true }));
  for (const [rel, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    fs.writeFileSync(path.join(root, rel), text);
  }
  return root;
}
const view = (root: string, installs: RecordedInstall[], flags: { containerd?: string; crio?: string } = {}): NodeView => ({
  ...readNode({ root, prefix: PREFIX, ...flags }, {}),
  installs,
  status: sampleStatus({ socket: '/var/run/nri/nri.sock' }),
});

async function listen(t: Test, file: string): Promise<net.Server> {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(file, resolve));
  t.teardown(() => server.close());
  return server;
}

/** A socket file nothing listens on: its process killed before it could remove it. */
async function staleSocket(file: string): Promise<void> {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const child = spawn(NODE, ['-e', "require('net').createServer().listen(process.argv[1], () => console.log('up'))", file], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise((resolve) => child.stdout.once('data', resolve));
  child.kill('SIGKILL');
  await new Promise((resolve) => child.once('exit', resolve));
}

t.test('no NRI plugin installed or running: skipped, with why', async (t) => {
  const root = shortRoot(t);
  const skipped = [{ check: 'nri-socket', state: 'skipped', what: 'no NRI plugin installed or running' }];
  t.same(nriSocketChecks(view(root, []), none), skipped);
  t.same(
    nriSocketChecks(view(root, [{ ...nri('containerd'), mode: 'shim' } as RecordedInstall]), none),
    skipped,
    'a runtime handler install',
  );
  t.same(nriSocketChecks({ ...view(root, []), status: undefined }, running), skipped, 'no status file: no socket known');
});

t.test('a plugin running without an install: the socket it dials, by what is at that path', async (t) => {
  const root = shortRoot(t);
  const socket = path.join(root, 'var/run/nri/nri.sock');
  const check = () => nriSocketChecks(view(root, []), running);
  const problem = [
    {
      check: 'nri-socket',
      state: 'problem',
      what: `the socket the plugin dials /var/run/nri/nri.sock is not there${NOT_THERE}`,
      todo: RESTART,
    },
  ];
  t.same(check(), problem, 'nothing there');
  fs.mkdirSync(path.dirname(socket), { recursive: true });
  fs.writeFileSync(socket, '');
  t.same(check(), problem, 'a regular file is not a socket');
  fs.rmSync(socket);
  const server = await listen(t, socket);
  const ok = [{ check: 'nri-socket', state: 'ok', what: 'the socket the plugin dials /var/run/nri/nri.sock is there' }];
  t.same(check(), ok, 'a listening socket');
  await new Promise((resolve) => server.close(resolve));
  await staleSocket(socket);
  const refused = await new Promise<string>((resolve) => net.connect(socket).once('error', (e: NodeJS.ErrnoException) => resolve(e.code!)));
  t.equal(refused, 'ECONNREFUSED', 'nothing listens on it');
  // the runtime creates the socket when NRI starts: the check reads the file; whether anything
  // answers on it is the plugin check's (connected or not)
  t.same(check(), ok, 'a socket left behind is still a socket');
  t.same(nriSocketChecks(view(root, []), { ...running, runsAs: null }), [
    { check: 'nri-socket', state: 'skipped', what: 'no NRI plugin installed or running' },
  ]);
});

const noContainerd = { skip: CONTAINERD ? false : 'containerd not installed' };

t.test("containerd 1.x: no NRI table in its reading, NRI's default socket", noContainerd, async (t) => {
  const root = shortRoot(t, { [CONFIG]: 'version = 2\n' });
  const node = () => view(root, [nri('containerd')], { containerd: CONTAINERD! });
  t.same(nriSocketChecks(node(), running), [
    {
      check: 'nri-socket',
      state: 'problem',
      what: `containerd's NRI socket /var/run/nri/nri.sock is not there${NOT_THERE}`,
      todo: RESTART,
    },
  ]);
  await listen(t, path.join(root, 'var/run/nri/nri.sock'));
  t.same(nriSocketChecks(node(), none), [
    { check: 'nri-socket', state: 'ok', what: "containerd's NRI socket /var/run/nri/nri.sock is there" },
  ]);
});

t.test('a configuration the runtime cannot read: a problem with its own words', noContainerd, async (t) => {
  const root = shortRoot(t, { [CONFIG]: 'version = 2\n[plugins\n' });
  const [r] = nriSocketChecks(view(root, [nri('containerd')], { containerd: CONTAINERD! }), none);
  t.match(r, {
    check: 'nri-socket',
    state: 'problem',
    what: new RegExp(
      `^containerd \\S+ \\(${CONTAINERD} --config ${root}${CONFIG} config dump\\) failed: containerd: failed to load TOML: ${root}${CONFIG}: \\(2, 2\\): `,
    ),
    todo: 'fix the file the runtime cannot read',
  });
});

t.test('no runtime binary to ask: skipped, with why', async (t) => {
  const root = shortRoot(t);
  t.same(nriSocketChecks(view(root, [nri('containerd')]), running), [
    {
      check: 'nri-socket',
      state: 'skipped',
      what: 'containerd: its NRI socket not read: no containerd under --root on PATH or in /usr/local/sbin, /usr/local/bin, /usr/sbin, /usr/bin, /sbin, /bin',
    },
  ]);
});

t.test('containerd 2.x: the socket_path of its reading', noSid, async (t) => {
  const sid = SID as { bin: string };
  const nriTable = '[plugins."io.containerd.nri.v1.nri"]\n  disable = false\n  socket_path = "/run/custom/nri.sock"\n';
  const root = shortRoot(t, { [CONFIG]: `version = 3\n${nriTable}` });
  await listen(t, path.join(root, 'run/custom/nri.sock'));
  t.same(nriSocketChecks(view(root, [nri('containerd')], { containerd: sid.bin }), none), [
    { check: 'nri-socket', state: 'ok', what: "containerd's NRI socket /run/custom/nri.sock is there" },
  ]);
});

t.test('CRI-O: the nri_listen of `crio config`', async (t) => {
  const root = shortRoot(t, { 'etc/crio/crio.conf.d/10-admin.conf': '[crio.nri]\nnri_listen = "/run/crio-nri/nri.sock"\n' });
  const crio = crioDouble(t.testdir()).bin;
  t.same(nriSocketChecks(view(root, [nri('crio')], { crio }), none), [
    {
      check: 'nri-socket',
      state: 'problem',
      what: `crio's NRI socket /run/crio-nri/nri.sock is not there${NOT_THERE}`,
      todo: RESTART,
    },
  ]);
});
