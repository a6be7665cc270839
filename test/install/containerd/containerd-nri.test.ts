// install --runtime containerd --mode nri into a temporary host root, read by containerd 2.1.9's
// own `config dump` (Debian sid, from the cache) and, where no binary may be asked, as both
// containerd lines would read the files: the plugin lands in the plugin_path in force, NRI is
// switched on only where it is off, an admin's NRI table is never edited, containerd 1.6 (no
// NRI) is refused, and uninstall puts every file back byte for byte.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { installRoot, install, snapshot, uninstall } from '../../helpers/install/install.ts';
import { containerd2ForInstall } from '../../helpers/nri/containerd.ts';
import { CONTAINERD, envhook } from '../../helpers/bundle.ts';
import { nriIndex, pluginWrapper } from '../../../src/install/nri-plugin.ts';
import { makeLayout } from '../../../src/install/layout.ts';
import { DAEMON_NODE_OPTION } from '../../../src/nri/process.ts';
import { findContainerd } from '../../../src/install/containerd/containerd-binary.ts';
import { refused } from '../../helpers/refusal.ts';

t.setTimeout(300_000);

const { c2, skip2 } = containerd2ForInstall();

const setup = installRoot;

const nri = (extra: string[] = []) => ['--mode', 'nri', ...extra];
// no containerd on PATH: install reads the files as both lines would
const NO_CONTAINERD = { PATH: '/nonexistent' };

t.test('index: two digits', async (t) => {
  t.equal(nriIndex(undefined), '50');
  t.equal(nriIndex('07'), '07');
  for (const bad of ['5', '100', 'ab', ''])
    t.throws(() => nriIndex(bad), { message: '--index must be two digits (00-99), as NRI names pre-installed plugins' });
});

t.test('the wrapper starts the installed envhook nri in the background, quoted, and exits 0', async (t) => {
  const layout = makeLayout('containerd', { prefix: "/opt/it's/envhook" });
  t.same(pluginWrapper(layout).toString().split('\n').slice(-3), [
    `exec '/opt/it'\\''s/envhook/envhook' nri --socket '/var/run/nri/nri.sock' &`,
    'exit 0',
    '',
  ]);
  t.equal(
    pluginWrapper(layout, { socket: "/run/it's.sock", log: '/l' }).toString().split('\n').at(-3),
    `exec '/opt/it'\\''s/envhook/envhook' nri --socket '/run/it'\\''s.sock' &`,
  );
});

t.test(
  "the wrapper, run by sh as the runtime runs it: NODE_OPTIONS gets the daemon's options, the admin's kept; fd 3 passes",
  async (t) => {
    const dir = t.testdir();
    const bin = path.join(dir, 'envhook');
    // A stand-in for envhook: reports its argument, NODE_OPTIONS, the supervisor's marker and whether fd 3 is open.
    const say = '"$1|$NODE_OPTIONS|$ENVHOOK_NRI_SUPERVISOR_OPTION|$(test -e /proc/self/fd/3 && echo fd3)"';
    fs.writeFileSync(bin, `#!/bin/sh\necho ${say}\n`, { mode: 0o755 });
    const wrapper = path.join(dir, '50-envhook');
    fs.writeFileSync(wrapper, pluginWrapper({ ...makeLayout('containerd', {}), bin }), { mode: 0o755 });
    // env -i: tap puts its own NODE_OPTIONS into every child it sees spawned.
    const run = (env: Record<string, string>) =>
      execFileSync(
        '/usr/bin/env',
        ['-i', ...Object.entries(env).map(([k, v]) => `${k}=${v}`), '/bin/sh', '-c', 'exec "$0" 3</dev/null', wrapper],
        { encoding: 'utf8' },
      ).trim();
    t.equal(run({}), `nri|${DAEMON_NODE_OPTION} --jitless|--jitless|fd3`);
    t.equal(run({ NODE_OPTIONS: '--max-old-space-size=64' }), `nri|--max-old-space-size=64 ${DAEMON_NODE_OPTION} --jitless|--jitless|fd3`);
  },
);

t.test("the wrapper: envhook's stderr appended to the log file; a log that cannot be opened does not stop the plugin", async (t) => {
  const dir = t.testdir();
  const bin = path.join(dir, 'envhook');
  fs.writeFileSync(bin, '#!/bin/sh\necho "started $*"\necho "a log line" >&2\n', { mode: 0o755 });
  const run = (log: string) => {
    const wrapper = path.join(dir, '50-envhook');
    fs.writeFileSync(wrapper, pluginWrapper({ ...makeLayout('containerd', {}), bin }, { socket: '/run/nri.sock', log }), { mode: 0o755 });
    return execFileSync('/usr/bin/env', ['-i', '/bin/sh', '-c', 'exec "$0" 2>/dev/null', wrapper], { encoding: 'utf8' }).trim();
  };
  const log = path.join(dir, 'nri.log');
  fs.writeFileSync(log, 'before\n');
  t.equal(run(log), 'started nri --socket /run/nri.sock');
  t.equal(fs.readFileSync(log, 'utf8'), 'before\na log line\n', 'appended');
  t.equal(run(path.join(dir, 'no/such/dir/nri.log')), 'started nri --socket /run/nri.sock', 'started all the same');
});

t.test(
  '2.1.9, version 3 root: NRI on by default, only the plugin is written; idempotent; uninstall restores',
  { skip: skip2 },
  async (t) => {
    const { root, source } = setup(t, { 'etc/containerd/config.toml': 'version = 3\n# the admin\n' });
    const original = snapshot(root);
    const dry = install({ runtime: 'containerd', root, source, extra: nri(['--containerd', c2!, '--dry-run']) });
    t.equal(dry.status, 0, dry.stderr);
    t.match(dry.stdout, /^would create \/opt\/nri\/plugins\/50-envhook$/m);
    t.same(snapshot(root), original, '--dry-run changes nothing');

    const first = install({ runtime: 'containerd', root, source, extra: nri(['--containerd', c2!]) });
    t.equal(first.status, 0, first.stderr);
    t.match(
      first.stdout,
      "note: NRI is on in /etc/containerd/config.toml as containerd reads it (containerd 2.x's default): no configuration written",
    );
    t.match(
      first.stdout,
      /^checked: containerd 2\.1\.9\S* config dump of \/etc\/containerd\/config.toml shows NRI on, with plugins from \/opt\/nri\/plugins$/m,
    );
    t.match(first.stdout, 'systemctl restart containerd');
    const plugin = path.join(root, 'opt/nri/plugins/50-envhook');
    t.equal(fs.statSync(plugin).mode & 0o777, 0o755);
    t.match(
      fs.readFileSync(plugin, 'utf8'),
      /^exec '\/usr\/local\/lib\/envhook\/envhook' nri --socket '\/var\/run\/nri\/nri.sock' --cri-socket '\/run\/containerd\/containerd.sock' &$/m,
    );
    t.match(
      first.stdout,
      'note: when its first worker exits or hangs, envhook registers again on /var/run/nri/nri.sock as an external plugin',
    );
    t.equal(fs.readFileSync(path.join(root, 'etc/containerd/config.toml'), 'utf8'), 'version = 3\n# the admin\n', 'the config untouched');

    const again = install({ runtime: 'containerd', root, source, extra: nri(['--containerd', c2!]) });
    t.equal(again.stdout, 'nothing changed: envhook is already installed for containerd (NRI plugin) under /usr/local/lib/envhook\n');

    const u = uninstall({ runtime: 'containerd', root, extra: nri() });
    t.equal(u.status, 0, u.stderr);
    t.same(snapshot(root), original, 'every file as before');
  },
);

t.test('2.1.9: the plugin goes to the plugin_path in force (set in an imported drop-in)', { skip: skip2 }, async (t) => {
  const { root, source } = setup(t, {
    'etc/containerd/config.toml': 'version = 3\nimports = ["conf.d/*.toml"]\n',
    'etc/containerd/conf.d/10-nri.toml': 'version = 3\n[plugins."io.containerd.nri.v1.nri"]\n  plugin_path = "/srv/nri/plugins"\n',
  });
  const r = install({ runtime: 'containerd', root, source, extra: nri(['--containerd', c2!, '--index', '70']) });
  t.equal(r.status, 0, r.stderr);
  t.ok(fs.existsSync(path.join(root, 'srv/nri/plugins/70-envhook')), '/srv/nri/plugins/70-envhook');
  t.notOk(fs.existsSync(path.join(root, 'opt/nri')), 'not the default directory');
  t.match(r.stdout, 'shows NRI on, with plugins from /srv/nri/plugins');
});

t.test('2.1.9: an admin file with NRI off is refused, nothing written', { skip: skip2 }, async (t) => {
  const { root, source } = setup(t, {
    'etc/containerd/config.toml': 'version = 3\n[plugins."io.containerd.nri.v1.nri"]\n  disable = true\n',
  });
  const before = snapshot(root);
  const r = install({ runtime: 'containerd', root, source, extra: nri(['--containerd', c2!]) });
  refused(
    t,
    r,
    'envhook: /etc/containerd/config.toml sets [plugins."io.containerd.nri.v1.nri"] and NRI is off as containerd reads it: set disable = false there, or pass --enable-nri to let install change exactly that key (the file backed up; uninstall puts it back)\n',
  );
  t.same(snapshot(root), before);
});

t.test('2.1.9 (no default validator): --nri-required refused, nothing written', { skip: skip2 }, async (t) => {
  const { root, source } = setup(t, { 'etc/containerd/config.toml': 'version = 3\n' });
  const before = snapshot(root);
  const r = install({ runtime: 'containerd', root, source, extra: nri(['--nri-required', '--containerd', c2!]) });
  refused(
    t,
    r,
    `envhook: --nri-required needs containerd 2.2 or later (NRI's default validator); containerd ${findContainerd(c2)!.version} has none: install without --nri-required, or upgrade containerd\n`,
  );
  t.same(snapshot(root), before);
});

t.test('containerd 1.6 (no NRI): refused', { skip: CONTAINERD ? false : 'no containerd 1.6 on PATH' }, async (t) => {
  const { root, source } = setup(t, { 'etc/containerd/config.toml': 'version = 2\n' });
  const before = snapshot(root);
  const r = install({ runtime: 'containerd', root, source, extra: nri(['--containerd', CONTAINERD!]) });
  refused(
    t,
    r,
    /^envhook: containerd 1\.6\.\S+ has no NRI \(containerd 1\.7 or later has it\): install the runtime handler instead \(--mode shim\)\n$/,
  );
  t.same(snapshot(root), before);
});

t.test('no containerd to ask, version 2 root: 1.7 would have NRI off, so a block switches it on; uninstall restores', async (t) => {
  const admin = '# the admin\nversion = 2\n\n[plugins."io.containerd.grpc.v1.cri".containerd]\n  snapshotter = "overlayfs"\n';
  const { root, source } = setup(t, { 'etc/containerd/config.toml': admin });
  const original = snapshot(root);
  const r = install({ runtime: 'containerd', root, source, extra: nri(), env: { ...process.env, ...NO_CONTAINERD } });
  t.equal(r.status, 0, r.stderr);
  t.match(r.stdout, 'note: NRI is off in /etc/containerd/config.toml as containerd reads it: switched on');
  const text = fs.readFileSync(path.join(root, 'etc/containerd/config.toml'), 'utf8');
  t.ok(text.startsWith(admin), "the admin's bytes first, untouched");
  t.match(text, /# BEGIN envhook[^\n]*\n\[plugins\."io\.containerd\.nri\.v1\.nri"\]\n  disable = false\n# END envhook\n$/);
  const u = uninstall({ runtime: 'containerd', root, extra: nri() });
  t.equal(u.status, 0, u.stderr);
  t.same(snapshot(root), original, 'every file as before');
});

t.test('the shim and the NRI installs are separate: both, then each uninstall removes its own', async (t) => {
  const { root, source } = setup(t, { 'etc/containerd/config.toml': 'version = 2\n' });
  const original = snapshot(root);
  const env = { ...process.env, ...NO_CONTAINERD };
  // the handler's block is in config.toml: the NRI switch must go elsewhere
  t.equal(install({ runtime: 'containerd', root, source, env }).status, 0);
  const clash = install({ runtime: 'containerd', root, source, extra: nri(), env });
  refused(
    t,
    clash,
    'envhook: /etc/containerd/config.toml carries the envhook block of the containerd install: name another file with --drop-in\n',
  );
  t.equal(uninstall({ runtime: 'containerd', root }).status, 0);
  t.same(snapshot(root), original);
});

t.test('Podman has no NRI', async (t) => {
  const { root, source } = setup(t, {});
  t.equal(install({ runtime: 'podman', root, source, extra: nri() }).stderr, 'envhook: Podman has no NRI: install with --mode shim\n');
});

t.test("the plugin's CRI socket: containerd's grpc.address as its files set it, or --cri-socket; the other plugin flags", async (t) => {
  const { root, source } = setup(t, {
    'etc/containerd/config.toml': 'version = 2\n[grpc]\n  address = "/run/k3s/containerd/containerd.sock"\n',
  });
  const wrapperLine = () => fs.readFileSync(path.join(root, 'opt/nri/plugins/50-envhook'), 'utf8').split('\n').at(-3);
  const r = install({ runtime: 'containerd', root, source, extra: nri(), env: { ...process.env, ...NO_CONTAINERD } });
  t.equal(r.status, 0, r.stderr);
  t.match(r.stdout, /^note: plugin evicts through \/run\/k3s\/containerd\/containerd\.sock \(containerd's grpc\.address\)$/m);
  t.equal(
    wrapperLine(),
    "exec '/usr/local/lib/envhook/envhook' nri --socket '/var/run/nri/nri.sock' --cri-socket '/run/k3s/containerd/containerd.sock' &",
  );
  const flags = ['--cri-socket', '/run/other.sock', '--evict-unapplied', '--metrics-address', '127.0.0.1:9901'];
  const again = install({ runtime: 'containerd', root, source, extra: nri(flags), env: { ...process.env, ...NO_CONTAINERD } });
  t.equal(again.status, 0, again.stderr);
  t.match(again.stdout, /^note: plugin evicts through \/run\/other\.sock \(--cri-socket\)$/m);
  t.equal(
    wrapperLine(),
    "exec '/usr/local/lib/envhook/envhook' nri --socket '/var/run/nri/nri.sock' --cri-socket '/run/other.sock' --evict-unapplied --metrics-address '127.0.0.1:9901' &",
  );
  for (const [extra, line] of [
    [['--evict-unapplied'], 'envhook: --evict-unapplied is only valid with --mode nri (it is a setting of the NRI plugin)\n'],
    [['--mode', 'nri', '--cri-socket', 'x.sock'], "envhook: --cri-socket x.sock: must be an absolute path (the runtime's CRI socket)\n"],
    [
      ['--mode', 'nri', '--metrics-address', '9901'],
      'envhook: --metrics-address 9901: not a listen address: use host:port, [::1]:port or :port\n',
    ],
  ] as const)
    refused(t, install({ runtime: 'containerd', root, source, extra: [...extra], env: { ...process.env, ...NO_CONTAINERD } }), line);
});

t.test(
  "--external-plugin (the Helm chart's nri.runtime.patchConfig): containerd 1.7's config default gets NRI on, no plugin file; doctor says so; uninstall restores",
  { skip: skip2 },
  async (t) => {
    const DEFAULT_17 = fs.readFileSync(path.join(import.meta.dirname, '../../fixtures/containerd/1.7.24-config-default.toml'), 'utf8');
    const { root, source } = setup(t, { 'etc/containerd/config.toml': DEFAULT_17 });
    const original = snapshot(root);
    const r = install({ runtime: 'containerd', root, source, extra: nri(['--external-plugin', '--enable-nri', '--containerd', c2!]) });
    t.equal(r.status, 0, r.stderr);
    t.match(
      r.stdout,
      "note: no plugin file (--external-plugin): envhook nri connects to /var/run/nri/nri.sock from elsewhere (the Helm chart's DaemonSet)",
    );
    t.match(
      r.stdout,
      /^checked: containerd 2\.1\.9\S* config dump of \/etc\/containerd\/config.toml shows NRI on for an external plugin$/m,
    );
    t.match(
      r.stdout,
      /^next:\n\s+restart containerd: systemctl restart containerd \(containerd reads its NRI configuration when it starts\)$/m,
    );
    t.notMatch(r.stdout, 'registers again', "no note about the pre-installed plugin's registration");
    t.notOk(fs.existsSync(path.join(root, 'opt/nri/plugins')), 'no plugin file, no plugin directory');
    const text = fs.readFileSync(path.join(root, 'etc/containerd/config.toml'), 'utf8');
    t.equal(text, DEFAULT_17.replace(/^(\s*)disable = true$/m, '$1disable = false'), 'exactly the disable key changed');
    const state = JSON.parse(fs.readFileSync(path.join(root, 'usr/local/lib/envhook/state.json'), 'utf8'));
    t.equal(state.runtimes['containerd-nri']?.externalPlugin, true, 'state.json records it');
    // the node's doctor judges it by containerd's own reading; no plugin runs here (no DaemonSet)
    const doctor = envhook(['doctor', '--root', root, '--containerd', c2!]);
    t.match(doctor.stdout, /^ok installed: containerd \(NRI on for an external plugin\)$/m);
    t.match(
      doctor.stdout,
      /^ok nri-plugin: containerd 2\.1\.9\S* config dump of \/etc\/containerd\/config.toml shows NRI on for an external plugin$/m,
    );
    t.match(
      doctor.stdout,
      /^problem plugin: .* — see the plugin's log \(kubectl logs for a DaemonSet, e\.g\. kubectl -n kube-system logs ds\/envhook-nri; the service's journal\)$/m,
    );
    const again = install({ runtime: 'containerd', root, source, extra: nri(['--external-plugin', '--enable-nri', '--containerd', c2!]) });
    t.match(again.stdout, /^nothing changed/, 'a restarted init container changes nothing');
    const u = uninstall({ runtime: 'containerd', root, extra: nri() });
    t.equal(u.status, 0, u.stderr);
    t.same(snapshot(root), original, 'every file as before');
  },
);

t.test('--external-plugin without --mode nri, or with --nri-log: refused, nothing written', async (t) => {
  const { root, source } = setup(t, { 'etc/containerd/config.toml': 'version = 2\n' });
  const before = snapshot(root);
  const env = { ...process.env, ...NO_CONTAINERD };
  refused(
    t,
    install({ runtime: 'containerd', root, source, extra: ['--external-plugin'], env }),
    'envhook: --external-plugin is only valid with --mode nri (it switches NRI on for a plugin run elsewhere)\n',
  );
  refused(
    t,
    install({ runtime: 'containerd', root, source, extra: nri(['--external-plugin', '--nri-log', '/var/log/x.log']), env }),
    "envhook: --nri-log and --external-plugin: an external plugin writes no log of install's; leave --nri-log out\n",
  );
  t.same(snapshot(root), before);
});
