// The NRI socket check: for each NRI install, the socket the runtime's own reading names
// (containerd's socket_path from `config dump`, CRI-O's nri_listen from `crio config`; NRI's
// default otherwise), else the socket a running plugin dials; ok when something listens there.
// Real Unix sockets (listening, one left by a listener killed with SIGKILL, one whose listener is
// stopped), a regular file in the way, the real containerd (Debian's; sid's 2.x where cached,
// running and killed) and the crio double.
import t, { type Test } from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { readNode, type NodeView, type RecordedInstall } from '../../src/doctor/node.ts';
import { nriSocketChecks } from '../../src/doctor/nri-socket-check.ts';
import type { PluginView } from '../../src/doctor/plugin-state.ts';
import { CONTAINERD } from '../helpers/bundle.ts';
import { crioDouble } from '../helpers/install/crio.ts';
import { sidContainerd } from '../helpers/install/containerd-sid.ts';
import { sampleStatus } from '../helpers/nri/status.ts';
import { fullSocketAt, listenAt, shortDir, staleSocketAt } from '../helpers/sockets.ts';

const SID = await sidContainerd();
const noSid = { skip: 'missing' in SID ? SID.missing : false };

const PREFIX = '/usr/local/lib/envhook';
const CONFIG = '/etc/containerd/config.toml';
const NOT_THERE = ' is not there: the runtime is not running or has not started NRI (off, or not restarted since install)';
const STALE =
  ' is a socket nothing listens on (connection refused): left by a runtime that is not running (killed before it could remove it), or NRI is off now';
const restart = (service = 'systemctl restart containerd, or crio') =>
  `restart the runtime (${service}): with NRI on it listens there when it starts`;
const nri = (runtime: string) =>
  ({ runtime, mode: 'nri', record: { config: CONFIG, files: {}, blocks: [] } }) as unknown as RecordedInstall;
const running: PluginView = { state: 'connected', runsAs: 'daemonset', problem: null };
const none: PluginView = { state: 'absent', runsAs: null, problem: null };

/** A root short enough for a socket path under it (107 bytes). */
function shortRoot(t: Test, files: Record<string, string> = {}): string {
  const root = shortDir(t, 'envhook-nri-socket-');
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

t.test('no NRI plugin installed or running: skipped, with why', async (t) => {
  const root = shortRoot(t);
  const skipped = [{ check: 'nri-socket', state: 'skipped', what: 'no NRI plugin installed or running' }];
  t.same(await nriSocketChecks(view(root, []), none), skipped);
  t.same(
    await nriSocketChecks(view(root, [{ ...nri('containerd'), mode: 'shim' } as RecordedInstall]), none),
    skipped,
    'a runtime handler install',
  );
  t.same(await nriSocketChecks({ ...view(root, []), status: undefined }, running), skipped, 'no status file: no socket known');
});

t.test('a plugin running without an install: the socket it dials, by what is at that path', async (t) => {
  const root = shortRoot(t);
  const socket = path.join(root, 'var/run/nri/nri.sock');
  const check = () => nriSocketChecks(view(root, []), running);
  const line = (state: string, what: string, todo?: string) => [{ check: 'nri-socket', state, what, ...(todo ? { todo } : {}) }];
  const dials = 'the socket the plugin dials /var/run/nri/nri.sock';
  t.same(await check(), line('problem', `${dials}${NOT_THERE}`, restart()), 'nothing there');
  fs.mkdirSync(path.dirname(socket), { recursive: true });
  fs.writeFileSync(socket, '');
  t.same(
    await check(),
    line('problem', `${dials} is a regular file, not a socket: no plugin can connect`, `${restart()}, in place of what is there`),
    'a regular file is not a socket',
  );
  fs.rmSync(socket);
  const server = await listenAt(t, socket);
  t.same(await check(), line('ok', `${dials} accepts connections`), 'a listening socket');
  await new Promise((resolve) => server.close(resolve));
  await staleSocketAt(t, socket);
  t.same(await check(), line('problem', `${dials}${STALE}`, restart()), 'a socket left by a killed listener is no NRI socket');
  fs.rmSync(socket);
  await fullSocketAt(t, socket);
  t.same(
    await check(),
    line(
      'problem',
      `${dials} accepts no connection: its queue is full (EAGAIN): the runtime is stopped or hung`,
      'look at the runtime (systemctl status containerd, or crio); restart it',
    ),
    'a stopped listener',
  );
  t.same(await nriSocketChecks(view(root, []), { ...running, runsAs: null }), [
    { check: 'nri-socket', state: 'skipped', what: 'no NRI plugin installed or running' },
  ]);
});

const noContainerd = { skip: CONTAINERD ? false : 'containerd not installed' };

t.test("containerd 1.x: no NRI table in its reading, NRI's default socket", noContainerd, async (t) => {
  const root = shortRoot(t, { [CONFIG]: 'version = 2\n' });
  const node = () => view(root, [nri('containerd')], { containerd: CONTAINERD! });
  t.same(await nriSocketChecks(node(), running), [
    {
      check: 'nri-socket',
      state: 'problem',
      what: `containerd's NRI socket /var/run/nri/nri.sock${NOT_THERE}`,
      todo: restart('systemctl restart containerd'),
    },
  ]);
  await listenAt(t, path.join(root, 'var/run/nri/nri.sock'));
  t.same(await nriSocketChecks(node(), none), [
    { check: 'nri-socket', state: 'ok', what: "containerd's NRI socket /var/run/nri/nri.sock accepts connections" },
  ]);
});

t.test('a configuration the runtime cannot read: a problem with its own words', noContainerd, async (t) => {
  const root = shortRoot(t, { [CONFIG]: 'version = 2\n[plugins\n' });
  const [r] = await nriSocketChecks(view(root, [nri('containerd')], { containerd: CONTAINERD! }), none);
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
  t.same(await nriSocketChecks(view(root, [nri('containerd')]), running), [
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
  await listenAt(t, path.join(root, 'run/custom/nri.sock'));
  t.same(await nriSocketChecks(view(root, [nri('containerd')], { containerd: sid.bin }), none), [
    { check: 'nri-socket', state: 'ok', what: "containerd's NRI socket /run/custom/nri.sock accepts connections" },
  ]);
});

t.test('CRI-O: the nri_listen of `crio config`', async (t) => {
  const root = shortRoot(t, { 'etc/crio/crio.conf.d/10-admin.conf': '[crio.nri]\nnri_listen = "/run/crio-nri/nri.sock"\n' });
  const crio = crioDouble(t.testdir()).bin;
  t.same(await nriSocketChecks(view(root, [nri('crio')], { crio }), none), [
    {
      check: 'nri-socket',
      state: 'problem',
      what: `crio's NRI socket /run/crio-nri/nri.sock${NOT_THERE}`,
      todo: restart('systemctl restart crio'),
    },
  ]);
});
