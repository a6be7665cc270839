// The install checks: each install state.json records, its files still there (else a problem
// before any runtime is asked), then the runtime's own reading of its configuration: containerd's
// `config dump` (Debian's containerd for the runtime handler, sid's 2.x for NRI), Podman's
// containers.conf files as Podman reads them. Installs made by the real `envhook install` into a
// scratch root, the admin's later edits made on its files. CRI-O's readings (the crio double)
// are test/cli/doctor.test.ts's.
import t, { type Test } from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { readNode, type NodeView } from '../../src/doctor/node.ts';
import { installChecks } from '../../src/doctor/install-check.ts';
import { findContainerd } from '../../src/install/containerd/containerd-binary.ts';
import { CONTAINERD } from '../helpers/bundle.ts';
import { sidContainerd } from '../helpers/install/containerd-sid.ts';
import { hostFiles, install, installRoot } from '../helpers/install/install.ts';

const SID = await sidContainerd();
const noSid = { skip: 'missing' in SID ? SID.missing : false };

const PREFIX = '/opt/eh';
const CONFIG = '/etc/containerd/config.toml';
const USUAL = '/usr/local/sbin, /usr/local/bin, /usr/sbin, /usr/bin, /sbin, /bin';
const again = (what: string) => `re-run envhook install ${what} with the flags it was installed with`;
const noContainerd = { skip: CONTAINERD ? false : 'containerd not installed' };

/** containerd's runtime handler and Podman's hooks under --prefix PREFIX, as install writes them: made once, copied for each test. */
function shimAndHooks(): string {
  const { root, source } = installRoot(t, { [CONFIG]: 'version = 2\n' });
  for (const [runtime, extra] of [
    ['containerd', ['--containerd', CONTAINERD!]],
    ['podman', []],
  ] as const) {
    const r = install({ runtime, root, source, extra: [...extra, '--prefix', PREFIX] });
    if (r.status !== 0) throw new Error(`install --runtime ${runtime}: ${r.stderr}`);
  }
  return root;
}
const installed = CONTAINERD ? shimAndHooks() : '';
function copyOfInstalled(t: Test): string {
  const root = path.join(t.testdir(), 'root');
  fs.cpSync(installed, root, { recursive: true });
  return root;
}
const view = (root: string, flags: { containerd?: string; crio?: string } = {}, prefix = PREFIX): NodeView =>
  readNode({ root, prefix, ...flags }, {});

t.test("each install by the runtime's own reading: containerd's handler, Podman's hooks_dir; and each broken", noContainerd, async (t) => {
  const root = copyOfInstalled(t);
  const checks = () => installChecks(view(root, { containerd: CONTAINERD! }));
  const v = findContainerd(CONTAINERD)!.version;
  t.same(checks(), [
    {
      check: 'handler',
      state: 'ok',
      what: `containerd ${v} config dump of ${CONFIG} shows the runtime handler "envhook" with BinaryName ${PREFIX}/envhook-runtime`,
    },
    {
      check: 'hooks',
      state: 'ok',
      what: `podman: hooks_dir as Podman's containers.conf files set it holds ${PREFIX}/hooks.d, with envhook-precreate.json and envhook-createruntime.json`,
    },
  ]);
  // the admin writes containerd's file anew and sets hooks_dir in a later drop-in
  hostFiles(root, {
    [CONFIG]: 'version = 2\n',
    'etc/containers/containers.conf.d/99-admin.conf': '[engine]\nhooks_dir = ["/usr/share/containers/oci/hooks.d"]\n',
  });
  t.same(checks(), [
    {
      check: 'handler',
      state: 'problem',
      what: `containerd ${v} config dump of ${CONFIG}: no runtime handler "envhook"`,
      todo: again(`--runtime containerd --prefix ${PREFIX}`),
    },
    {
      check: 'hooks',
      state: 'problem',
      what: `podman: hooks_dir as Podman's containers.conf files set it (/usr/share/containers/oci/hooks.d) does not hold ${PREFIX}/hooks.d`,
      todo: again(`--runtime podman --prefix ${PREFIX}`),
    },
  ]);
  hostFiles(root, { 'etc/containers/containers.conf.d/99-admin.conf': '[engine]\nhooks_dir = "/x"\n' });
  const node = view(root);
  t.same(installChecks({ ...node, installs: node.installs.filter((i) => i.runtime === 'podman') }), [
    {
      check: 'hooks',
      state: 'problem',
      what: 'podman: /etc/containers/containers.conf.d/99-admin.conf: engine.hooks_dir is not a list of strings',
      todo: again(`--runtime podman --prefix ${PREFIX}`),
    },
  ]);
});

t.test("envhook's files gone: a problem before any runtime is asked; none to ask: skipped", noContainerd, async (t) => {
  const root = copyOfInstalled(t);
  // installed without --containerd: no binary recorded, none under the root to ask
  const stateFile = path.join(root, PREFIX, 'state.json');
  const state = JSON.parse(fs.readFileSync(stateFile, 'utf8'));
  delete state.runtimes.containerd.binary;
  fs.writeFileSync(stateFile, JSON.stringify(state));
  const handler = () => installChecks(view(root))[0];
  t.same(handler(), {
    check: 'handler',
    state: 'skipped',
    what: `containerd: not checked with the runtime's own reading: no containerd under --root on PATH or in ${USUAL}`,
  });
  fs.rmSync(path.join(root, PREFIX, 'envhook-runtime'));
  const todo = again(`--runtime containerd --prefix ${PREFIX}`);
  t.same(handler(), { check: 'handler', state: 'problem', what: `containerd: envhook's ${PREFIX}/envhook-runtime is gone`, todo });
  fs.rmSync(path.join(root, PREFIX, 'runtimeclass.yaml'));
  t.same(handler(), {
    check: 'handler',
    state: 'problem',
    what: `containerd: envhook's ${PREFIX}/envhook-runtime, ${PREFIX}/runtimeclass.yaml are gone`,
    todo,
  });
});

t.test('NRI with containerd 2.x: --nri-required as state.json records it', noSid, async (t) => {
  const sid = SID as { bin: string };
  const { root, source } = installRoot(t, { [CONFIG]: 'version = 3\n' });
  const r = install({ runtime: 'containerd', root, source, extra: ['--mode', 'nri', '--containerd', sid.bin] });
  t.equal(r.status, 0, r.stderr);
  const node = view(root, { containerd: sid.bin }, '/usr/local/lib/envhook');
  const v = findContainerd(sid.bin)!.version;
  const dump = `containerd ${v} config dump of ${CONFIG}`;
  t.same(installChecks(node), [{ check: 'nri-plugin', state: 'ok', what: `${dump} shows NRI on, with plugins from /opt/nri/plugins` }]);
  const stateFile = path.join(root, 'usr/local/lib/envhook/state.json');
  const state = JSON.parse(fs.readFileSync(stateFile, 'utf8'));
  const recorded = (nriRequired: boolean | undefined) => {
    state.runtimes['containerd-nri'].nriRequired = nriRequired;
    fs.writeFileSync(stateFile, JSON.stringify(state));
    return installChecks({ ...node, installs: view(root, {}, '/usr/local/lib/envhook').installs });
  };
  t.same(recorded(true), [
    {
      check: 'nri-plugin',
      state: 'problem',
      what: `${dump}: NRI's default validator is off; required_plugins does not hold "envhook"`,
      todo: again('--runtime containerd --mode nri'),
    },
  ]);
  t.same(recorded(undefined), installChecks(node), "a state file from before it was recorded: envhook's own lines ask for none");
});

t.test("a state file edited by hand without envhook's plugin file: a problem naming the state file, not a crash", noSid, async (t) => {
  const sid = SID as { bin: string };
  const { root } = installRoot(t, { [CONFIG]: 'version = 3\n' });
  const record = { config: CONFIG, files: {}, blocks: [] };
  hostFiles(root, { [`${PREFIX}/state.json`]: JSON.stringify({ version: 1, runtimes: { 'containerd-nri': record } }) });
  t.same(installChecks(view(root, { containerd: sid.bin })), [
    {
      check: 'nri-plugin',
      state: 'problem',
      what: `containerd: ${PREFIX}/state.json records no NRI plugin file of envhook's`,
      todo: again(`--runtime containerd --mode nri --prefix ${PREFIX}`),
    },
  ]);
});
