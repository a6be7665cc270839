// install --runtime crio --mode nri into a temporary host root: the plugin in the nri_plugin_dir
// CRI-O would use (crio.conf, then the drop-ins in name order), a drop-in of its own switching NRI
// on, a later drop-in turning it off refused, the check with the `crio` double of
// test/helpers/install/crio.ts (CRI-O is not installable here; it prints `crio config` from the files as
// CRI-O does, defaults commented out), uninstall byte for byte.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { installRoot, install, snapshot, uninstall } from '../../helpers/install/install.ts';
import { crioNriDropIn } from '../../../src/install/crio/crio-nri.ts';
import { crioDouble } from '../../helpers/install/crio.ts';
import { refused } from '../../helpers/refusal.ts';

t.setTimeout(120_000);
const nri = (extra: string[] = []) => ['--mode', 'nri', ...extra];
const NO_CRIO = { ...process.env, PATH: '/nonexistent' };

t.test('the drop-in parses and switches NRI on', async (t) => {
  t.match(crioNriDropIn(), /^\[crio\.nri\]\nenable_nri = true\n$/m);
});

t.test('install, reinstall, uninstall; the plugin dir in force', async (t) => {
  const { root, source } = installRoot(t, {
    'etc/crio/crio.conf': '[crio.nri]\nnri_plugin_dir = "/srv/nri/plugins"\n',
    'etc/crio/crio.conf.d/10-admin.conf': '[crio.runtime]\ndefault_runtime = "runc"\n',
  });
  const original = snapshot(root);
  const r = install({ runtime: 'crio', root, source, extra: nri(), env: NO_CRIO });
  t.equal(r.status, 0, r.stderr);
  t.match(r.stdout, /^create \/etc\/crio\/crio\.conf\.d\/50-envhook-nri\.conf$/m);
  t.match(
    r.stdout,
    `\nnote: not checked with CRI-O: no crio under --root on PATH or in /usr/local/sbin, /usr/local/bin, /usr/sbin, /usr/bin, /sbin, /bin (--crio PATH names one)\n`,
  );
  t.match(r.stdout, 'systemctl restart crio');
  t.equal(fs.readFileSync(path.join(root, 'etc/crio/crio.conf.d/50-envhook-nri.conf'), 'utf8'), crioNriDropIn());
  t.match(
    fs.readFileSync(path.join(root, 'srv/nri/plugins/50-envhook'), 'utf8'),
    /^exec '\/usr\/local\/lib\/envhook\/envhook' nri --socket '\/var\/run\/nri\/nri.sock' --cri-socket '\/var\/run\/crio\/crio.sock' &$/m,
  );
  t.equal(
    install({ runtime: 'crio', root, source, extra: nri(), env: NO_CRIO }).stdout,
    'nothing changed: envhook is already installed for crio (NRI plugin) under /usr/local/lib/envhook\n',
  );
  const u = uninstall({ runtime: 'crio', root, extra: nri() });
  t.equal(u.status, 0, u.stderr);
  t.same(snapshot(root), original, 'every file as before');
});

t.test('a later drop-in that turns NRI off: refused, nothing written', async (t) => {
  const { root, source } = installRoot(t, { 'etc/crio/crio.conf.d/90-admin.conf': '[crio.nri]\nenable_nri = false\n' });
  const before = snapshot(root);
  const r = install({ runtime: 'crio', root, source, extra: nri(), env: NO_CRIO });
  refused(
    t,
    r,
    'envhook: /etc/crio/crio.conf.d/90-admin.conf sets enable_nri = false and CRI-O reads it after /etc/crio/crio.conf.d/50-envhook-nri.conf: NRI would stay off; remove that line or name a later file with --config\n',
  );
  t.same(snapshot(root), before);
});

t.test('the check on CRI-O 1.30 to 1.36, which print enable_nri and nri_plugin_dir commented out (their defaults)', async (t) => {
  for (const version of ['1.30.0', '1.33.2', '1.36.3']) {
    const { root, source } = installRoot(t, {});
    const crio = crioDouble(path.dirname(root), version);
    const r = install({ runtime: 'crio', root, source, extra: nri(['--crio', crio.bin]), env: NO_CRIO });
    t.equal(r.status, 0, `${version}: ${r.stderr}`);
    t.match(r.stdout, /^checked: crio config shows NRI on, with plugins from \/opt\/nri\/plugins$/m);
  }
});

t.test(
  'the check on CRI-O 1.29 (NRI off by default: the drop-in turns it on, printed uncommented), a plugin dir of crio.conf',
  async (t) => {
    const { root, source } = installRoot(t, { 'etc/crio/crio.conf': '[crio.nri]\nnri_plugin_dir = "/srv/nri/plugins"\n' });
    const crio = crioDouble(path.dirname(root), '1.29.0');
    const r = install({ runtime: 'crio', root, source, extra: nri(['--crio', crio.bin]), env: NO_CRIO });
    t.equal(r.status, 0, r.stderr);
    t.match(r.stdout, /^checked: crio config shows NRI on, with plugins from \/srv\/nri\/plugins$/m);
  },
);

t.test('the check fails on CRI-O 1.25 (no NRI): every file back', async (t) => {
  const { root, source } = installRoot(t, {});
  const crio = crioDouble(path.dirname(root), '1.25.4');
  const before = snapshot(root);
  const f = install({ runtime: 'crio', root, source, extra: nri(['--crio', crio.bin]), env: NO_CRIO });
  refused(t, f, 'envhook: crio config: no [crio.nri] table: CRI-O 1.26 or later has NRI; every file is back as it was\n');
  t.same(snapshot(root), before, 'every file back');
});

t.test('CRI-O reads every file under crio.conf.d, in filepath.Walk order: one without .conf, one in a subdirectory', async (t) => {
  for (const [file, after] of [
    ['etc/crio/crio.conf.d/90-admin', true],
    ['etc/crio/crio.conf.d/60/off.toml', true],
    ['etc/crio/crio.conf.d/10-admin', false],
  ] as const) {
    const { root, source } = installRoot(t, { [file]: '[crio.nri]\nenable_nri = false\nnri_plugin_dir = "/srv/nri/plugins"\n' });
    const before = snapshot(root);
    const r = install({ runtime: 'crio', root, source, extra: nri(), env: NO_CRIO });
    if (after) {
      t.equal(
        r.stderr,
        `envhook: /${file} sets enable_nri = false and CRI-O reads it after /etc/crio/crio.conf.d/50-envhook-nri.conf: NRI would stay off; remove that line or name a later file with --config\n`,
      );
      t.same(snapshot(root), before, 'nothing written');
    } else {
      // read before envhook's drop-in: its plugin dir holds, its enable_nri is overridden
      t.equal(r.status, 0, r.stderr);
      t.ok(fs.existsSync(path.join(root, 'srv/nri/plugins/50-envhook')), 'the plugin in the directory that file names');
    }
  }
});

t.test("the plugin dials CRI-O's nri_listen; nri_disable_connections = true is said in a note", async (t) => {
  const { root, source } = installRoot(t, {
    'etc/crio/crio.conf': '[crio.nri]\nnri_listen = "/run/crio-nri/nri.sock"\nnri_disable_connections = true\n',
  });
  const r = install({ runtime: 'crio', root, source, extra: [...nri(), '--nri-log', '/var/log/x/nri.log'], env: NO_CRIO });
  t.equal(r.status, 0, r.stderr);
  const wrapper = fs.readFileSync(path.join(root, 'opt/nri/plugins/50-envhook'), 'utf8');
  t.match(
    wrapper,
    /^exec '\/usr\/local\/lib\/envhook\/envhook' nri --socket '\/run\/crio-nri\/nri.sock' --cri-socket '\/var\/run\/crio\/crio.sock' &$/m,
  );
  t.match(wrapper, /^log='\/var\/log\/x\/nri.log'$/m);
  t.match(
    r.stdout,
    'note: CRI-O does not accept external NRI connections (nri_disable_connections = true): a pre-installed envhook that exits or hangs is not replaced until CRI-O restarts',
  );
  const bad = install({ runtime: 'crio', root, source, extra: ['--nri-log', '/var/log/x.log'], env: NO_CRIO });
  t.equal(bad.stderr, 'envhook: --nri-log is only valid with --mode nri (the pre-installed plugin writes it)\n');
});

t.test("--external-plugin: CRI-O 1.29's NRI switched on by the drop-in, no plugin file; uninstall restores", async (t) => {
  const { root, source } = installRoot(t, {});
  const original = snapshot(root);
  const crio = crioDouble(path.dirname(root), '1.29.0');
  const r = install({ runtime: 'crio', root, source, extra: nri(['--external-plugin', '--crio', crio.bin]), env: NO_CRIO });
  t.equal(r.status, 0, r.stderr);
  t.match(r.stdout, /^checked: crio config shows NRI on for an external plugin$/m);
  t.match(r.stdout, 'restart CRI-O: systemctl restart crio (CRI-O reads its NRI configuration when it starts; a reload does not)');
  t.notOk(fs.existsSync(path.join(root, 'opt/nri/plugins')), 'no plugin file');
  t.equal(fs.readFileSync(path.join(root, 'etc/crio/crio.conf.d/50-envhook-nri.conf'), 'utf8'), crioNriDropIn(undefined, true));
  t.match(crioNriDropIn(undefined, true), "for envhook's external NRI plugin");
  const u = uninstall({ runtime: 'crio', root, extra: nri() });
  t.equal(u.status, 0, u.stderr);
  t.same(snapshot(root), original, 'every file as before');
});
