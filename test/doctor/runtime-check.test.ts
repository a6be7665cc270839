// The runtime check: one line a runtime envhook is installed for (its version and binary, or why
// there is none and what to do), else the runtime the connected NRI plugin registered with.
// The binaries under --root are sh stand-ins printing what the real programs print for
// --version; a real runc where a flag names the wrong program. The line for a user who is not
// root (the node's runtime is run with chroot) is test/cli/not-root.test.ts's: it needs another UID.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { checkLine } from '../../src/doctor/check.ts';
import { readNode, type NodeView, type RecordedInstall } from '../../src/doctor/node.ts';
import type { PluginView } from '../../src/doctor/plugin-state.ts';
import { runtimeChecks } from '../../src/doctor/runtime-check.ts';
import { RUNC } from '../helpers/bundle.ts';
import { addScriptsToRoot } from '../helpers/install/node-root.ts';
import { sampleStatus } from '../helpers/nri/status.ts';
import { crioDouble } from '../helpers/install/crio.ts';

const PREFIX = '/usr/local/lib/envhook';
const USUAL = '/usr/local/sbin, /usr/local/bin, /usr/sbin, /usr/bin, /sbin, /bin';
const CRIO = "#!/bin/sh\nprintf 'crio version 1.36.3\\n   GitCommit:        0000000000000000000000000000000000000000\\n'\n";
const PODMAN = "#!/bin/sh\necho 'podman version 4.3.1'\n";

/** The first line runc prints for --version (`runc version 1.1.5+ds1`). */
const RUNC_VERSION = RUNC ? execFileSync(RUNC, ['--version'], { encoding: 'utf8' }).split('\n')[0] : '';

const rec = (runtime: string, mode: string) => ({ runtime, mode, record: {} }) as unknown as RecordedInstall;
const connected: PluginView = { state: 'connected', runsAs: 'daemonset', problem: null };

function node(
  installs: RecordedInstall[],
  scripts: Record<string, string> = {},
  flags: { containerd?: string; crio?: string } = {},
  root = path.join(t.testdir({ root: {} }), 'root'),
): NodeView {
  if (root !== '/') addScriptsToRoot(root, scripts); // never onto this machine's own /bin/sh
  return { ...readNode({ root, prefix: PREFIX, ...flags }, {}), installs, status: sampleStatus() };
}

t.test('one line a runtime installed (two modes of one runtime: one line), its version and binary', async (t) => {
  const n = node([rec('crio', 'shim'), rec('crio', 'nri'), rec('podman', 'shim')], {
    '/usr/bin/crio': CRIO,
    '/usr/local/bin/podman': PODMAN,
  });
  t.same(runtimeChecks(n, connected), [
    { check: 'runtime', state: 'ok', what: 'crio 1.36.3 (/usr/bin/crio)' },
    { check: 'runtime', state: 'ok', what: 'podman 4.3.1 (/usr/local/bin/podman)' },
  ]);
});

t.test('a runtime installed but not found: a problem saying where it was looked for, and what to do', async (t) => {
  const n = node([rec('containerd', 'shim')]);
  const [r] = runtimeChecks(n);
  t.equal(
    checkLine(r!),
    `problem runtime: containerd: no containerd under --root on PATH or in ${USUAL} — install containerd, or check --root (it is the node's root: ${n.root})`,
  );
});

t.test(
  "a flag naming another program: runc's version is not taken for containerd's",
  { skip: RUNC ? false : 'runc not installed' },
  async (t) => {
    const n = node([rec('containerd', 'shim')], {}, { containerd: RUNC! });
    t.same(runtimeChecks(n), [
      {
        check: 'runtime',
        state: 'problem',
        what: `containerd: --containerd ${RUNC}: not containerd: its --version printed "${RUNC_VERSION}" (exit 0)`,
        todo: "name containerd's executable with --containerd, or leave --containerd out (the node's, under --root)",
      },
    ]);
  },
);

t.test('nothing installed: the runtime the connected plugin registered with, else no line', async (t) => {
  const n = node([]);
  t.same(runtimeChecks(n, connected), [{ check: 'runtime', state: 'ok', what: 'containerd 2.1.9, as it registered the NRI plugin' }]);
  t.same(runtimeChecks(n, { ...connected, state: 'disconnected' }), [], 'a plugin not connected: its registration is history');
  t.same(runtimeChecks(n), [], 'without the plugin (envhook status): nothing');
  t.same(runtimeChecks({ ...n, status: undefined }, connected), [], 'no status file');
});

t.test('a binary a flag names: the line names the flag, whatever the root (/ included)', async (t) => {
  const crio = crioDouble(t.testdir()).bin;
  for (const root of [undefined, '/'])
    t.same(runtimeChecks(node([rec('crio', 'nri')], {}, { crio }, root)), [
      { check: 'runtime', state: 'ok', what: `crio 1.36.3 (${crio}, named by --crio)` },
    ]);
  t.same(runtimeChecks(node([rec('crio', 'nri')], {}, { crio: '/bin/true' })), [
    {
      check: 'runtime',
      state: 'problem',
      what: `crio: --crio /bin/true: not CRI-O: its --version printed "${execFileSync('/bin/true', ['--version'], { encoding: 'utf8' }).split('\n')[0]}" (exit 0)`,
      todo: "name CRI-O's executable with --crio, or leave --crio out (the node's, under --root)",
    },
  ]);
});
