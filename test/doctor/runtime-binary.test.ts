// The runtime binary the node checks ask: the node's own under --root (run there with chroot), or
// the one --containerd / --crio names (run on this machine); its version, or why there is none.
// Asked once a node view. The stand-ins under a root are sh scripts that print what the real
// programs print for --version (CRI-O 1.36's first lines, as the crio double prints them;
// Podman's one line) and the real front; the real containerd and runc of this machine where
// they are installed.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { readNode, type NodeView } from '../../src/doctor/node.ts';
import { runtimeBinary } from '../../src/doctor/runtime-binary.ts';
import { CONTAINERD, REPO, RUNC } from '../helpers/bundle.ts';
import { crioDouble } from '../helpers/install/crio.ts';
import { addScriptsToRoot } from '../helpers/install/node-root.ts';

const PREFIX = '/usr/local/lib/envhook';
const USUAL = '/usr/local/sbin, /usr/local/bin, /usr/sbin, /usr/bin, /sbin, /bin';
/** CRI-O's `crio --version` (urfave/cli: the version, then the build's lines indented); each run counted in /runs. */
const CRIO =
  "#!/bin/sh\necho run >> /runs\nprintf 'crio version 1.36.3\\n   GitCommit:        0000000000000000000000000000000000000000\\n'\n";
const PODMAN = "#!/bin/sh\necho 'podman version 4.3.1'\n";

function nodeRoot(scripts: Record<string, string>): string {
  const root = path.join(t.testdir({ root: {} }), 'root');
  addScriptsToRoot(root, scripts);
  return root;
}
const view = (root: string, flags: { containerd?: string; crio?: string } = {}): NodeView =>
  readNode({ root, prefix: PREFIX, ...flags }, {});

t.test("the node's own, under --root, run there with chroot: its path and version", async (t) => {
  const root = nodeRoot({ '/usr/bin/crio': CRIO, '/usr/bin/podman': PODMAN });
  const node = view(root);
  t.same(runtimeBinary(node, 'crio'), { runtime: 'crio', bin: { path: '/usr/bin/crio', root, version: '1.36.3' }, version: '1.36.3' });
  t.same(runtimeBinary(node, 'podman'), { runtime: 'podman', bin: { path: '/usr/bin/podman', root }, version: '4.3.1' });
});

t.test('asked once a node view: the binary runs again only for a new view', async (t) => {
  const root = nodeRoot({ '/usr/bin/crio': CRIO });
  const runs = () => fs.readFileSync(path.join(root, 'runs'), 'utf8').split('\n').filter(Boolean).length;
  const node = view(root);
  const first = runtimeBinary(node, 'crio');
  t.equal(runtimeBinary(node, 'crio'), first, 'the same answer');
  t.equal(runs(), 1, 'crio --version ran once');
  t.same(runtimeBinary(view(root), 'crio'), first);
  t.equal(runs(), 2, 'a new view asks again');
});

t.test('none under --root: why, for each runtime', async (t) => {
  const node = view(nodeRoot({}));
  for (const runtime of ['containerd', 'crio', 'podman'] as const)
    t.same(runtimeBinary(node, runtime), { runtime, missing: `no ${runtime} under --root on PATH or in ${USUAL}` });
});

t.test('an envhook front is never taken for the runtime: the next one on the path, or none', async (t) => {
  const front = fs.readFileSync(path.join(REPO, 'hooks/envhook-runtime'), 'utf8');
  let root = nodeRoot({ '/usr/local/bin/crio': front, '/usr/bin/crio': CRIO });
  t.same(runtimeBinary(view(root), 'crio'), {
    runtime: 'crio',
    bin: { path: '/usr/bin/crio', root, version: '1.36.3' },
    version: '1.36.3',
  });
  root = nodeRoot({ '/usr/local/bin/crio': front });
  t.same(runtimeBinary(view(root), 'crio'), { runtime: 'crio', missing: `no crio under --root on PATH or in ${USUAL}` });
});

t.test('a binary that prints no version: its exit status named, no version claimed', async (t) => {
  const node = view(nodeRoot({ '/usr/bin/podman': "#!/bin/sh\necho 'Error: unknown flag' >&2\nexit 125\n" }));
  t.same(runtimeBinary(node, 'podman'), {
    runtime: 'podman',
    missing: '/usr/bin/podman --version did not print a Podman version (exit 125)',
  });
});

t.test('--crio names a binary of this machine: run here, not under --root', async (t) => {
  const crio = crioDouble(t.testdir()).bin;
  // the root's own crio would answer differently: the flag wins
  const root = nodeRoot({ '/usr/bin/crio': CRIO.replace('1.36.3', '1.30.0') });
  t.same(runtimeBinary(view(root, { crio }), 'crio'), {
    runtime: 'crio',
    bin: { path: crio, root: '/', flag: '--crio', version: '1.36.3' },
    version: '1.36.3',
  });
  t.same(runtimeBinary(view(root, { crio: '/nonexistent/crio' }), 'crio'), {
    runtime: 'crio',
    missing: '--crio /nonexistent/crio: cannot run it: no such file or directory (ENOENT)',
    todo: "name CRI-O's executable with --crio, or leave --crio out (the node's, under --root)",
  });
});

t.test('--containerd: the real containerd, its version and line', { skip: CONTAINERD ? false : 'containerd not installed' }, async (t) => {
  // `containerd <package> <version> <revision>`
  const version = execFileSync(CONTAINERD!, ['--version'], { encoding: 'utf8' }).split(' ')[2]!;
  const bin = { path: CONTAINERD!, root: '/', flag: '--containerd', version, family: Number(version.split('.')[0]) >= 2 ? '2.x' : '1.x' };
  t.same(runtimeBinary(view(nodeRoot({}), { containerd: CONTAINERD! }), 'containerd'), {
    runtime: 'containerd',
    bin,
    version,
    containerd: bin,
  });
});

t.test("--containerd naming runc: runc's version line is not a containerd's", { skip: RUNC ? false : 'runc not installed' }, async (t) => {
  t.same(runtimeBinary(view(nodeRoot({}), { containerd: RUNC! }), 'containerd'), {
    runtime: 'containerd',
    missing: `--containerd ${RUNC}: not containerd: its --version printed "${execFileSync(RUNC!, ['--version'], { encoding: 'utf8' }).split('\n')[0]}" (exit 0)`,
    todo: "name containerd's executable with --containerd, or leave --containerd out (the node's, under --root)",
  });
});
