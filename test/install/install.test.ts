// install / uninstall into a temporary host root, for each runtime: the files land, a second
// install changes nothing, --dry-run changes nothing, uninstall restores every file byte for byte.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { crioEtc, crioNodeRoot, installRoot, install, realSource, REAL_NODE, snapshot, uninstall } from '../helpers/install/install.ts';
import { refused } from '../helpers/refusal.ts';

// every install asks the containerd on PATH (version, config dump): room for a busy machine
t.setTimeout(300_000);

const ADMIN_CONTAINERD =
  '# the admin\'s file, with comments\nversion = 2\n\n[plugins."io.containerd.grpc.v1.cri".containerd]\n  snapshotter = "overlayfs" # keep me\n';

const setup = installRoot;

const cases = {
  containerd: {
    files: { 'etc/containerd/config.toml': ADMIN_CONTAINERD },
    expect: [
      'usr/local/lib/envhook/envhook',
      'usr/local/lib/envhook/envhook-runtime',
      'usr/local/lib/envhook/envhook.cjs',
      'usr/local/lib/envhook/envhook-main.cjs',
      'usr/local/lib/envhook/runtimeclass.yaml',
    ],
  },
  crio: {
    files: { 'etc/crio/crio.conf': '[crio]\n' },
    expect: [
      'etc/crio/crio.conf.d/50-envhook.conf',
      'usr/share/containers/oci/hooks.d/envhook-createruntime.json',
      'usr/local/lib/envhook/runtimeclass.yaml',
    ],
  },
  podman: {
    files: { 'etc/containers/containers.conf': '[engine]\nhooks_dir = ["/etc/admin/hooks.d"]\n' },
    expect: [
      'etc/containers/containers.conf.d/50-envhook.conf',
      'usr/local/lib/envhook/hooks.d/envhook-precreate.json',
      'usr/local/lib/envhook/hooks.d/envhook-createruntime.json',
    ],
  },
} as const;

for (const [runtime, c] of Object.entries(cases) as [keyof typeof cases, (typeof cases)[keyof typeof cases]][]) {
  t.test(`${runtime}: install, reinstall, uninstall`, async (t) => {
    const { root, source } = setup(t, c.files);
    const original = snapshot(root);

    const dry = install({ runtime, root, source, extra: ['--dry-run'] });
    t.equal(dry.status, 0, dry.stderr);
    t.match(dry.stdout, /^would create \/usr\/local\/lib\/envhook\/envhook$/m);
    t.same(snapshot(root), original, '--dry-run changes nothing');

    const first = install({ runtime, root, source });
    t.equal(first.status, 0, first.stderr);
    for (const f of c.expect) t.ok(fs.existsSync(path.join(root, f)), f);
    t.equal(fs.statSync(path.join(root, 'usr/local/lib/envhook/envhook-runtime')).mode & 0o777, 0o755);
    t.match(first.stdout, /^next:/m);

    const second = install({ runtime, root, source });
    t.equal(second.status, 0, second.stderr);
    t.equal(second.stdout, `nothing changed: envhook is already installed for ${runtime} under /usr/local/lib/envhook\n`);

    const un = uninstall({ runtime, root });
    t.equal(un.status, 0, un.stderr);
    t.same(snapshot(root), original, 'uninstall restores every file byte for byte');
    t.notOk(fs.existsSync(path.join(root, 'usr/local/lib/envhook')), 'the prefix is gone');
    t.match(uninstall({ runtime, root }).stdout, /nothing changed: envhook is not installed/);
  });
}

t.test("hooks.d files: anchored regex, executable path, stages; never precreate in CRI-O's directory", async (t) => {
  const { root, source } = crioNodeRoot(t, {});
  t.equal(install({ runtime: 'crio', root, source }).status, 0);
  t.equal(install({ runtime: 'podman', root, source }).status, 0);
  const read = (p: string) => JSON.parse(fs.readFileSync(path.join(root, p), 'utf8'));
  const cr = read('usr/share/containers/oci/hooks.d/envhook-createruntime.json');
  t.same(cr, {
    version: '1.0.0',
    hook: { path: '/usr/local/lib/envhook/envhook', args: ['envhook', 'hook'] },
    when: { annotations: { '^envhook\\.io/': '.*' } },
    stages: ['createRuntime'],
  });
  t.same(read('usr/local/lib/envhook/hooks.d/envhook-precreate.json').stages, ['precreate']);
  t.same(read('usr/local/lib/envhook/hooks.d/envhook-precreate.json').hook.args, ['envhook', 'precreate']);
  t.same(fs.readdirSync(path.join(root, 'usr/share/containers/oci/hooks.d')), ['envhook-createruntime.json']);
  const dropIn = fs.readFileSync(path.join(root, 'etc/containers/containers.conf.d/50-envhook.conf'), 'utf8');
  t.match(
    dropIn,
    'hooks_dir = ["/usr/share/containers/oci/hooks.d", "/etc/containers/oci/hooks.d", "/usr/local/lib/envhook/hooks.d"]',
    "Podman's defaults restated",
  );
});

t.test("podman: the admin's hooks_dir is kept ahead of envhook's", async (t) => {
  const { root, source } = setup(t, cases.podman.files);
  t.equal(install({ runtime: 'podman', root, source }).status, 0);
  t.match(
    fs.readFileSync(path.join(root, 'etc/containers/containers.conf.d/50-envhook.conf'), 'utf8'),
    'hooks_dir = ["/etc/admin/hooks.d", "/usr/local/lib/envhook/hooks.d"]',
  );
});

t.test('two runtimes share the executables; uninstalling one keeps them', async (t) => {
  const { root, source } = setup(t, cases.containerd.files);
  crioEtc(root);
  const original = snapshot(root);
  t.equal(install({ runtime: 'containerd', root, source }).status, 0);
  t.equal(install({ runtime: 'crio', root, source }).status, 0);
  t.equal(uninstall({ runtime: 'containerd', root }).status, 0);
  t.ok(fs.existsSync(path.join(root, 'usr/local/lib/envhook/envhook-runtime')), 'still used by crio');
  t.ok(fs.existsSync(path.join(root, 'usr/local/lib/envhook/runtimeclass.yaml')));
  t.equal(fs.readFileSync(path.join(root, 'etc/containerd/config.toml'), 'utf8'), ADMIN_CONTAINERD);
  t.equal(uninstall({ runtime: 'crio', root }).status, 0);
  t.same(snapshot(root), original);
});

t.test("an admin's file in envhook's place is backed up, never overwritten silently, and put back", async (t) => {
  const { root, source } = setup(t, { 'etc/crio/crio.conf.d/50-envhook.conf': '# the admin wrote this\n' });
  const original = snapshot(root);
  const r = install({ runtime: 'crio', root, source });
  t.equal(r.status, 0, r.stderr);
  t.match(
    r.stdout,
    'update /etc/crio/crio.conf.d/50-envhook.conf (original saved as /usr/local/lib/envhook/backup/etc/crio/crio.conf.d/50-envhook.conf)',
  );
  t.match(r.stdout, 'note: this file was not written by envhook');
  t.equal(
    fs.readFileSync(path.join(root, 'usr/local/lib/envhook/backup/etc/crio/crio.conf.d/50-envhook.conf'), 'utf8'),
    '# the admin wrote this\n',
  );
  t.equal(uninstall({ runtime: 'crio', root }).status, 0);
  t.same(snapshot(root), original);
});

t.test('containerd: --dry-run prints a diff; an admin edit after install survives uninstall', async (t) => {
  const { root, source } = setup(t, cases.containerd.files);
  const dry = install({ runtime: 'containerd', root, source, extra: ['--dry-run'] });
  t.match(dry.stdout, '--- /etc/containerd/config.toml\n+++ /etc/containerd/config.toml\n');
  t.match(dry.stdout, '+[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.envhook]');
  t.equal(install({ runtime: 'containerd', root, source }).status, 0);
  const file = path.join(root, 'etc/containerd/config.toml');
  fs.appendFileSync(file, '# added by the admin later\n');
  const un = uninstall({ runtime: 'containerd', root });
  t.equal(un.status, 0, un.stderr);
  t.match(un.stdout, "note: changed since install: only envhook's block removed");
  const after = fs.readFileSync(file, 'utf8');
  t.notMatch(after, 'envhook');
  t.match(after, '# added by the admin later');
  t.ok(after.startsWith(ADMIN_CONTAINERD));
});

t.test('containerd: another prefix taking the install over (--take-over) rewrites only the block', async (t) => {
  const { root, source } = setup(t, cases.containerd.files);
  t.equal(install({ runtime: 'containerd', root, source }).status, 0);
  fs.writeFileSync(path.join(source, 'hooks/envhook-runtime'), '#!/bin/sh\n# v2\nexec runc "$@"\n');
  const r = install({ runtime: 'containerd', root, source, extra: ['--prefix', '/opt/eh2', '--take-over'] });
  t.equal(r.status, 0, r.stderr);
  t.match(r.stdout, /^update \/etc\/containerd\/config\.toml$/m, 'no second backup');
  t.match(fs.readFileSync(path.join(root, 'etc/containerd/config.toml'), 'utf8'), 'BinaryName = "/opt/eh2/envhook-runtime"');
});

t.test('bad input is refused with one line', async (t) => {
  const { root, source } = setup(t, { 'etc/containerd/config.toml': '[plugins.cri]\n' });
  const r = install({ runtime: 'containerd', root, source });
  refused(t, r, /^envhook: \/etc\/containerd\/config\.toml is a version 1 config/);
  t.equal(install({ runtime: 'docker' as never, root, source }).status, 1);
  t.match(install({ runtime: 'crio', root, source, extra: ['--prefix', 'relative'] }).stderr, /--prefix must be an absolute host path/);
});

t.test("the source's hooks.d templates are used, with hook.path set to the installed executable", async (t) => {
  const { root, source } = setup(t, {});
  const template = {
    version: '1.0.0',
    hook: { path: '/somewhere/else/envhook', args: ['envhook', 'precreate', '--log-file', '/var/log/envhook/precreate.log'] },
    when: { annotations: { '^envhook\\.io/': '.*' } },
    stages: ['precreate'],
  };
  fs.writeFileSync(path.join(source, 'hooks/envhook-precreate.json'), JSON.stringify(template));
  t.equal(install({ runtime: 'podman', root, source }).status, 0);
  const got = JSON.parse(fs.readFileSync(path.join(root, 'usr/local/lib/envhook/hooks.d/envhook-precreate.json'), 'utf8'));
  t.same(got, { ...template, hook: { ...template.hook, path: '/usr/local/lib/envhook/envhook' } });
  fs.writeFileSync(
    path.join(source, 'hooks/envhook-precreate.json'),
    JSON.stringify({ ...template, when: { annotations: { 'envhook\\.io/': '.*' } } }),
  );
  const bad = install({ runtime: 'podman', root, source });
  refused(t, bad, /anchored annotation regexes/);
});

t.test('no single executable: the bundle (launcher and main) beside a wrapper that runs it from its own directory', async (t) => {
  const dir = t.testdir({});
  const root = path.join(dir, 'root');
  fs.mkdirSync(root);
  crioEtc(root);
  const source = realSource(path.join(dir, 'src'), { bundleOnly: true });
  const original = snapshot(root);
  const r = install({ runtime: 'crio', root, source });
  t.equal(r.status, 0, r.stderr);
  const prefix = path.join(root, 'usr/local/lib/envhook');
  t.same(fs.readdirSync(prefix).sort(), [
    'envhook',
    'envhook-main.cjs',
    'envhook-runtime',
    'envhook-runtime.conf',
    'envhook.cjs',
    'runtimeclass.yaml',
    'state.json',
  ]);
  const wrapper = fs.readFileSync(path.join(prefix, 'envhook'), 'utf8');
  t.match(wrapper, `exec '${REAL_NODE}' "\${self%/*}/envhook.cjs" "$@"`);
  t.notMatch(wrapper, '/usr/local/lib/envhook', 'no host path: works under any root');
  // the installed tree runs where it is (a test root here, /host in the DaemonSet), and through a symlink
  fs.symlinkSync(path.join(prefix, 'envhook'), path.join(dir, 'envhook-link'));
  for (const exe of [path.join(prefix, 'envhook'), path.join(dir, 'envhook-link')]) {
    const v = spawnSync(exe, ['version'], { encoding: 'utf8', cwd: '/' });
    t.equal(v.status, 0, v.stderr);
    t.match(v.stdout, /^envhook \d+\.\d+\.\d+/);
  }
  t.equal(uninstall({ runtime: 'crio', root }).status, 0);
  t.same(snapshot(root), original, 'byte for byte');
});

t.test('reinstall with a single executable removes the bundle the previous install wrote', async (t) => {
  const { root, source } = setup(t, {});
  const original = snapshot(root);
  t.equal(install({ runtime: 'podman', root, source }).status, 0);
  const prefix = path.join(root, 'usr/local/lib/envhook');
  t.ok(fs.existsSync(path.join(prefix, 'envhook-main.cjs')));
  fs.writeFileSync(path.join(source, 'dist/envhook'), '#!/bin/sh\n# fixture single executable\n', { mode: 0o755 });
  const r = install({ runtime: 'podman', root, source });
  t.equal(r.status, 0, r.stderr);
  t.match(r.stdout, /^remove \/usr\/local\/lib\/envhook\/envhook\.cjs$/m);
  t.match(r.stdout, /^remove \/usr\/local\/lib\/envhook\/envhook-main\.cjs$/m);
  t.same(fs.readdirSync(prefix).sort(), ['envhook', 'envhook-runtime', 'envhook-runtime.conf', 'hooks.d', 'state.json']);
  t.equal(fs.readFileSync(path.join(prefix, 'envhook'), 'utf8'), '#!/bin/sh\n# fixture single executable\n');
  t.equal(uninstall({ runtime: 'podman', root }).status, 0);
  t.same(snapshot(root), original);
});

t.test(
  'containerd: --dry-run says where the block goes and why; a later install that places it elsewhere takes it out of the old file',
  async (t) => {
    const { root, source } = setup(t, {
      'etc/containerd/config.toml': "version = 3\nimports = ['conf.d/*.toml']\n",
      'etc/containerd/conf.d/10-cgroup.toml':
        "version = 3\n[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]\n  SystemdCgroup = true\n",
    });
    const original = snapshot(root);
    const env = { PATH: '/nonexistent' };
    const dry = install({ runtime: 'containerd', root, source, env, extra: ['--dry-run'] });
    t.equal(dry.status, 0, dry.stderr);
    t.match(
      dry.stdout,
      /^would update \/etc\/containerd\/config\.toml .*\n  note: envhook's block goes here: containerd 2\.x merges imported files table by table/m,
    );
    t.match(dry.stdout, '+  SystemdCgroup = true', 'the option set in the drop-in, in the diff');
    t.same(snapshot(root), original);
    t.equal(install({ runtime: 'containerd', root, source, env }).status, 0);
    const moved = install({ runtime: 'containerd', root, source, env, extra: ['--drop-in', '/etc/containerd/conf.d/50-envhook.toml'] });
    t.equal(moved.status, 0, moved.stderr);
    t.match(
      moved.stdout,
      /^create \/etc\/containerd\/conf\.d\/50-envhook\.toml\n  note: envhook's block goes here: \/etc\/containerd\/conf\.d\/50-envhook\.toml is imported by \/etc\/containerd\/config\.toml/m,
    );
    t.equal(
      fs.readFileSync(path.join(root, 'etc/containerd/config.toml'), 'utf8'),
      "version = 3\nimports = ['conf.d/*.toml']\n",
      'the old block is gone from the root file',
    );
    t.equal(uninstall({ runtime: 'containerd', root }).status, 0);
    t.same(snapshot(root), original, 'byte for byte');
  },
);
