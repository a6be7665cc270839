// Not root where root is needed: the built CLI run as nobody says `run as root`, in one line, exit
// 1 (it said `envhook: internal error (Error EACCES)`). The CLI and Node are copied where nobody
// can reach them (helpers/other-uid.ts); the targets are root's directories.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { builtCli, CONTAINERD, REPO } from '../helpers/bundle.ts';
import { nodeAsOther, otherUidDir } from '../helpers/other-uid.ts';
import { HAS_SEA, realSource } from '../helpers/install/install.ts';
import { addToRoot } from '../helpers/install/node-root.ts';

const NOBODY = 65534;
const skip = process.getuid?.() === 0 ? false : 'needs root (to run as nobody)';

t.test('as nobody: one line that says run as root, exit 1', { skip }, async (t) => {
  const dir = otherUidDir(t, 'not-root');
  fs.copyFileSync(builtCli(), path.join(dir, 'envhook.cjs'));
  fs.copyFileSync(path.join(REPO, 'dist/envhook-main.cjs'), path.join(dir, 'envhook-main.cjs'));
  for (const f of ['envhook.cjs', 'envhook-main.cjs']) fs.chmodSync(path.join(dir, f), 0o644);
  // root's: nobody may not enter `root-only`, and may read but not write `host` (the pretend host root)
  const closed = path.join(dir, 'root-only');
  fs.mkdirSync(path.join(closed, 'bundle'), { recursive: true });
  fs.chmodSync(closed, 0o700);
  const host = path.join(dir, 'host');
  fs.mkdirSync(path.join(host, 'var/lib/kubelet'), { recursive: true });
  const runDir = path.join(host, 'run/envhook');
  const denied = 'permission denied (EACCES): run as root';
  const cases: [string[], string][] = [
    [['nri', '--socket', path.join(dir, 'nri.sock'), '--run-dir', runDir], `cannot create run directory ${runDir}: ${denied}`],
    [
      ['watch', '--run-dir', runDir, '--kubelet-root', path.join(host, 'var/lib/kubelet')],
      `cannot create run directory ${runDir}: ${denied}`,
    ],
    [['inject', '--bundle', path.join(closed, 'bundle')], `cannot read ${path.join(closed, 'bundle/config.json')}: ${denied}`],
  ];
  if (HAS_SEA) {
    // install's source as a node gets it: the front, the bundle, the single executable (linked, not copied)
    const source = realSource(path.join(dir, 'source'), { bundleOnly: true });
    fs.linkSync(path.join(REPO, 'dist/envhook'), path.join(source, 'dist/envhook'));
    const args = ['install', '--runtime', 'podman', '--root', host, '--source', source];
    cases.push([args, `mkdir ${path.join(host, 'usr/local/lib/envhook')}: ${denied}`]);
  }
  if (CONTAINERD) {
    // the node's containerd is run inside --root with chroot, which is root's (it said: --version
    // did not print a containerd version (exit 125))
    addToRoot(host, { '/usr/bin/containerd': CONTAINERD });
    fs.mkdirSync(path.join(host, 'etc/containerd'), { recursive: true });
    fs.writeFileSync(path.join(host, 'etc/containerd/config.toml'), 'version = 2\n');
    const args = ['install', '--runtime', 'containerd', '--root', host];
    cases.push([args, 'cannot run /usr/bin/containerd --version: operation not permitted (EPERM): run as root']);
  }
  for (const [args, line] of cases) {
    const r = nodeAsOther(dir, NOBODY, [path.join(dir, 'envhook.cjs'), ...args], 60_000);
    t.equal(r.stderr, `envhook: ${line}\n`, `envhook ${args[0]}`);
    t.equal(r.status, 1);
    t.equal(r.stdout, '');
  }
  if (CONTAINERD) {
    // status of a containerd install as nobody: the runtime check says what to do
    const state = { version: 1, runtimes: { containerd: { config: '/etc/containerd/config.toml', files: {}, blocks: [] } } };
    fs.mkdirSync(path.join(host, 'usr/local/lib/envhook'), { recursive: true });
    fs.writeFileSync(path.join(host, 'usr/local/lib/envhook/state.json'), JSON.stringify(state));
    const r = nodeAsOther(dir, NOBODY, [path.join(dir, 'envhook.cjs'), 'status', '--root', host], 60_000);
    const problem =
      "runtime: containerd: cannot run /usr/bin/containerd --version: operation not permitted (EPERM) — run as root (the node's runtime is run inside --root with chroot)";
    t.equal(r.stderr, `envhook: ${problem}\n`, 'envhook status');
    t.equal(r.status, 1);
    t.match(r.stdout, `\n  problem ${problem}\n`);
  }
});
