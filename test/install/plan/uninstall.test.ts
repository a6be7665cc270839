// uninstall finds what install did: without --mode it removes every install recorded for the
// runtime (the NRI plugin as well as the runtime handler), with the wrong --mode it names the
// command that works, it removes the directories install created (and only those), and it never
// leaves a runnable file pointing at what it removed (an edited plugin wrapper is moved aside).
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { crioEtc, crioNodeRoot, hostFiles, installRoot, install, snapshot, uninstall } from '../../helpers/install/install.ts';
import { containerd2ForInstall } from '../../helpers/nri/containerd.ts';
import { refused } from '../../helpers/refusal.ts';

t.setTimeout(300_000);

const { c2, skip2 } = containerd2ForInstall();
// no containerd on PATH: install reads the files as both lines would
const env = { ...process.env, PATH: '/nonexistent' };
const D = '/srv/envhook';
const prefix = ['--prefix', D];
const nri = ['--mode', 'nri', ...prefix];

t.test('install --mode nri, then uninstall with no --mode: the plugin, its directories and the switch are gone', async (t) => {
  const { root, source } = installRoot(t, { 'etc/containerd/config.toml': '# the admin\nversion = 2\n' });
  const original = snapshot(root);
  t.equal(install({ runtime: 'containerd', root, source, extra: nri, env }).status, 0);
  t.ok(fs.existsSync(path.join(root, 'opt/nri/plugins/50-envhook')));
  const u = uninstall({ runtime: 'containerd', root, extra: prefix });
  t.equal(u.status, 0, u.stderr);
  t.match(u.stdout, /^remove \/opt\/nri\/plugins\/50-envhook$/m);
  t.match(u.stdout, /^remove directory \/opt\/nri\/plugins \(install created it\)$/m);
  t.same(snapshot(root), original, 'every file and directory as before');
  t.equal(
    uninstall({ runtime: 'containerd', root, extra: prefix }).stdout,
    `nothing changed: envhook is not installed for containerd under ${D}\n`,
  );
});

t.test('2.1.9: the handler and the NRI plugin installed, uninstall with no --mode removes both', { skip: skip2 }, async (t) => {
  const { root, source } = installRoot(t, { 'etc/containerd/config.toml': 'version = 3\n' });
  const original = snapshot(root);
  const bin = ['--containerd', c2!];
  t.equal(install({ runtime: 'containerd', root, source, extra: [...prefix, ...bin] }).status, 0);
  t.equal(install({ runtime: 'containerd', root, source, extra: [...nri, ...bin] }).status, 0);
  const u = uninstall({ runtime: 'containerd', root, extra: prefix });
  t.equal(u.status, 0, u.stderr);
  t.same(snapshot(root), original, 'every file and directory as before');
});

t.test('--mode shim when only the NRI plugin is installed: nothing removed, the command that works named', async (t) => {
  const { root, source } = installRoot(t, { 'etc/containerd/config.toml': 'version = 2\n' });
  t.equal(install({ runtime: 'containerd', root, source, extra: nri, env }).status, 0);
  const before = snapshot(root);
  const u = uninstall({ runtime: 'containerd', root, extra: ['--mode', 'shim', ...prefix] });
  t.equal(u.status, 0, u.stderr);
  t.equal(
    u.stdout,
    `nothing changed: envhook is installed for containerd as the NRI plugin under ${D}, not as the runtime handler: envhook uninstall --runtime containerd --mode nri --root ${root} --prefix ${D}\n`,
  );
  t.same(snapshot(root), before);
  // the named command works
  t.equal(uninstall({ runtime: 'containerd', root, extra: ['--mode', 'nri', ...prefix] }).status, 0);
  t.notOk(fs.existsSync(path.join(root, 'opt/nri')));
});

t.test("a plugin directory that was there before install stays, empty, with the admin's own files", async (t) => {
  const { root, source } = installRoot(t, { 'etc/containerd/config.toml': 'version = 2\n' });
  fs.mkdirSync(path.join(root, 'opt/nri/plugins'), { recursive: true });
  const original = snapshot(root);
  t.equal(install({ runtime: 'containerd', root, source, extra: nri, env }).status, 0);
  // a file the admin puts there after install keeps the directory install created
  hostFiles(root, { 'etc/nri/conf.d/10-admin.conf': 'x\n' });
  t.equal(uninstall({ runtime: 'containerd', root, extra: prefix }).status, 0);
  t.ok(fs.existsSync(path.join(root, 'opt/nri/plugins')), 'the directory the admin had');
  t.same(
    snapshot(root),
    new Map([
      ...original,
      ['etc/nri/', Buffer.from('755')],
      ['etc/nri/conf.d/', Buffer.from('755')],
      ['etc/nri/conf.d/10-admin.conf', Buffer.from('x\n')],
    ]),
  );
});

t.test('a directory two installs share is removed with the last of them', async (t) => {
  const { root, source } = installRoot(t, { 'etc/containerd/config.toml': 'version = 2\n' });
  crioEtc(root); // the node has CRI-O too
  const original = snapshot(root);
  t.equal(install({ runtime: 'containerd', root, source, extra: nri, env }).status, 0);
  // the CRI-O plugin install puts its own NN-envhook into the same directory, which exists by then
  t.equal(install({ runtime: 'crio', root, source, extra: [...nri, '--index', '60'], env }).status, 0);
  t.equal(uninstall({ runtime: 'containerd', root, extra: prefix }).status, 0);
  t.same(fs.readdirSync(path.join(root, 'opt/nri/plugins')), ['60-envhook']);
  t.equal(uninstall({ runtime: 'crio', root, extra: prefix }).status, 0);
  t.same(snapshot(root), original, 'every file and directory as before');
});

t.test('an edited plugin wrapper: kept as the admin wrote it, but where nothing starts it', async (t) => {
  const { root, source } = installRoot(t, { 'etc/containerd/config.toml': 'version = 2\n' });
  t.equal(install({ runtime: 'containerd', root, source, extra: nri, env }).status, 0);
  const plugin = path.join(root, 'opt/nri/plugins/50-envhook');
  const edited = fs
    .readFileSync(plugin, 'utf8')
    .replace('export NODE_OPTIONS', 'export NODE_OPTIONS\nENVHOOK_LOG_LEVEL=debug; export ENVHOOK_LOG_LEVEL');
  fs.writeFileSync(plugin, edited);
  const u = uninstall({ runtime: 'containerd', root, extra: ['--mode', 'nri', ...prefix] });
  t.equal(u.status, 0, u.stderr);
  const aside = `${D}/backup/opt/nri/plugins/50-envhook.edited`;
  t.match(
    u.stdout,
    `note: changed since install, and it runs ${D}/envhook, which uninstall removes: moved to ${aside} (mode 0600: nothing starts it)`,
  );
  t.notOk(fs.existsSync(plugin), 'no NN-envhook left in the plugin directory');
  t.notOk(fs.existsSync(path.join(root, 'opt/nri')), 'nor the directories install made for it');
  t.notOk(fs.existsSync(path.join(root, D, 'envhook')), 'the binary is gone');
  t.equal(fs.readFileSync(path.join(root, aside), 'utf8'), edited, "the admin's edit kept");
  t.equal(fs.statSync(path.join(root, aside)).mode & 0o777, 0o600, 'not executable');
});

t.test('an edited hooks.d file naming the removed binary is moved aside too; an edited file naming nothing removed stays', async (t) => {
  const { root, source } = crioNodeRoot(t, {});
  t.equal(install({ runtime: 'crio', root, source, extra: [...prefix, '--log-level', 'info'], env }).status, 0);
  const hook = path.join(root, 'usr/share/containers/oci/hooks.d/envhook-createruntime.json');
  fs.writeFileSync(hook, fs.readFileSync(hook, 'utf8').replace('"hook"', '"hook", "--log-level=debug"'));
  const settings = path.join(root, 'etc/envhook/config.json');
  fs.writeFileSync(settings, '{ "logLevel": "debug" }\n');
  const u = uninstall({ runtime: 'crio', root, extra: prefix });
  t.equal(u.status, 0, u.stderr);
  t.notOk(fs.existsSync(hook), 'no hooks.d file runs the removed binary');
  t.ok(fs.existsSync(path.join(root, D, 'backup/usr/share/containers/oci/hooks.d/envhook-createruntime.json.edited')));
  t.equal(fs.readFileSync(settings, 'utf8'), '{ "logLevel": "debug" }\n', 'the edited settings stay where they are');
  t.match(u.stdout, 'keep /etc/envhook/config.json\n  note: changed since install: left in place\n');
});

t.test('a state file whose records are not what install writes: one line, nothing changed', async (t) => {
  const { root } = installRoot(t, {});
  for (const bad of [
    { 'containerd-nri': { config: 'x', files: {}, blocks: [], dirs: [1] } },
    { 'containerd-nri': { config: 'x', files: {}, blocks: [], edits: [{ file: 'f' }] } },
    { containerd: null },
  ]) {
    hostFiles(root, { 'usr/local/lib/envhook/state.json': JSON.stringify({ version: 1, runtimes: bad }) });
    const before = snapshot(root);
    const u = uninstall({ runtime: 'containerd', root });
    refused(t, u, 'envhook: /usr/local/lib/envhook/state.json is not an envhook install state file\n');
    t.same(snapshot(root), before);
  }
});

t.test(
  'containerd 1.6, the handler under --root: the lines say where the paths are, every directory install created, and the restart',
  { skip: fs.existsSync('/usr/bin/containerd') ? false : 'no /usr/bin/containerd (Debian bookworm containerd 1.6)' },
  async (t) => {
    const { root, source } = installRoot(t, { 'etc/containerd/config.toml': 'version = 2\n[plugins."io.containerd.grpc.v1.cri"]\n' });
    const original = snapshot(root);
    t.equal(install({ runtime: 'containerd', root, source, extra: ['--containerd', '/usr/bin/containerd'] }).status, 0);
    const lines = (dryRun: boolean) => {
      const w = dryRun ? 'would ' : '';
      return [
        `paths below are the node's, under --root ${root}`,
        `${w}update /etc/containerd/config.toml`,
        `${w}remove /etc/systemd/system/envhook-watch.service`,
        ...['runtimeclass.yaml', 'envhook-runtime', 'envhook-runtime.conf', 'envhook', 'envhook.cjs', 'envhook-main.cjs', 'state.json'].map(
          (f) => `${w}remove /usr/local/lib/envhook/${f}`,
        ),
        ...['/usr/local/lib/envhook', '/etc/systemd/system', '/usr/local/lib', '/etc/systemd', '/usr/local', '/usr'].map(
          (d) => `${w}remove directory ${d} (install created it)`,
        ),
      ];
    };
    const dry = uninstall({ runtime: 'containerd', root, extra: ['--dry-run'] });
    t.same(
      dry.stdout.split('\n').filter((l) => !/^([-+@ ]|$)/.test(l)),
      lines(true),
      'the dry run: the same lines, each directory that would go',
    );
    const u = uninstall({ runtime: 'containerd', root });
    t.equal(u.status, 0, u.stderr);
    t.equal(
      u.stdout,
      [
        ...lines(false),
        'next:',
        '  restart containerd: systemctl restart containerd (the running containerd still has the runtime handler "envhook")',
        '  stop the owner watcher: systemctl disable --now envhook-watch.service && systemctl daemon-reload',
        '',
      ].join('\n'),
    );
    t.same(snapshot(root), original, 'every file and directory as before');
  },
);
