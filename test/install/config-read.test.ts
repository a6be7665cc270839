// A file the runtime would not read is refused before anything is written, run as an admin runs
// install: a typo of containerd's root file, a CRI-O or Podman drop-in outside the directory the
// runtime scans, a --root that is not a directory. --service-config says containerd's service
// starts it with --config FILE.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { fakeSource, hostFiles, install, snapshot, uninstall } from '../helpers/install/install.ts';
import { refused } from '../helpers/refusal.ts';

const NOWHERE = { PATH: '/nonexistent' };

function setup(t: { testdir(): string }) {
  const dir = t.testdir();
  const root = path.join(dir, 'root');
  hostFiles(root, { 'etc/containerd/config.toml': 'version = 3\n' });
  return { dir, root, source: fakeSource(path.join(dir, 'src')), original: snapshot(root) };
}

const refusals: [string, 'containerd' | 'crio' | 'podman', string[], string][] = [
  [
    'containerd: a --config containerd does not load (a typo)',
    'containerd',
    ['--config', '/etc/containerd/confg.toml'],
    'envhook: --config /etc/containerd/confg.toml: containerd loads /etc/containerd/config.toml unless its service starts it with --config FILE; if it starts containerd with --config /etc/containerd/confg.toml, add --service-config; otherwise leave --config out\n',
  ],
  [
    'containerd NRI: the same',
    'containerd',
    ['--mode', 'nri', '--config', '/etc/containerd/confg.toml'],
    'envhook: --config /etc/containerd/confg.toml: containerd loads /etc/containerd/config.toml unless its service starts it with --config FILE; if it starts containerd with --config /etc/containerd/confg.toml, add --service-config; otherwise leave --config out\n',
  ],
  [
    'CRI-O: a drop-in outside crio.conf.d',
    'crio',
    ['--config', '/etc/crio/50-envhook.conf'],
    'envhook: --config /etc/crio/50-envhook.conf: CRI-O reads drop-ins only from /etc/crio/crio.conf.d: name a file there\n',
  ],
  [
    'Podman: a drop-in without .conf',
    'podman',
    ['--config', '/etc/containers/containers.conf.d/50-envhook.toml'],
    'envhook: --config /etc/containers/containers.conf.d/50-envhook.toml: Podman reads drop-ins only as *.conf files in /usr/share/containers/containers.conf.d or /etc/containers/containers.conf.d: name one there\n',
  ],
  [
    '--service-config is containerd only',
    'crio',
    ['--service-config'],
    'envhook: --service-config is only valid with --runtime containerd (it says containerd is started with --config FILE)\n',
  ],
];

for (const [name, runtime, extra, line] of refusals)
  t.test(`${name}: refused, nothing written`, async (t) => {
    const { root, source, original } = setup(t);
    const r = install({ runtime, root, source, extra, env: NOWHERE });
    refused(t, r, line);
    t.equal(r.stdout, '');
    t.same(snapshot(root), original);
  });

t.test('--service-config: the file the service loads is the one written', async (t) => {
  const { root, source } = setup(t);
  hostFiles(root, { 'etc/containerd/node.toml': 'version = 3\n' });
  const r = install({
    runtime: 'containerd',
    root,
    source,
    extra: ['--config', '/etc/containerd/node.toml', '--service-config'],
    env: NOWHERE,
  });
  t.equal(r.status, 0, r.stderr);
  t.match(r.stdout, /^update \/etc\/containerd\/node\.toml/m);
  t.equal(fs.readFileSync(path.join(root, 'etc/containerd/config.toml'), 'utf8'), 'version = 3\n', 'the default file untouched');
});

t.test('--root that does not exist, or a file: refused, nothing created (install and uninstall)', async (t) => {
  const { dir, source } = setup(t);
  const missing = path.join(dir, 'does-not-exist');
  for (const runtime of ['containerd', 'crio', 'podman'] as const) {
    const r = install({ runtime, root: missing, source, env: NOWHERE });
    refused(
      t,
      r,
      `envhook: --root ${missing} does not exist: name the node's root directory (the installer DaemonSet mounts it at /host)\n`,
    );
  }
  t.notOk(fs.existsSync(missing), 'no tree created');
  const file = path.join(dir, 'a-file');
  fs.writeFileSync(file, '');
  const i = install({ runtime: 'containerd', root: file, source, env: NOWHERE });
  refused(t, i, `envhook: --root ${file} is not a directory: name the node's root directory\n`);
  const u = uninstall({ runtime: 'containerd', root: missing });
  refused(t, u, `envhook: --root ${missing} does not exist: name the node's root directory (the installer DaemonSet mounts it at /host)\n`);
});
