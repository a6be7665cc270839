// install --runtime crio --mode nri into a temporary host root: the plugin in the nri_plugin_dir
// CRI-O would use (crio.conf, then the drop-ins in name order), a drop-in of its own switching NRI
// on, a later drop-in turning it off refused, the check with a stand-in `crio config` (CRI-O is
// not installable here), uninstall byte for byte.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { installRoot, install, snapshot, uninstall } from '../helpers/install.ts';
import { crioNriDropIn } from '../../src/install/crio-nri.ts';

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
  t.match(r.stdout, 'note: not checked with CRI-O: no crio on PATH');
  t.match(r.stdout, 'systemctl restart crio');
  t.equal(fs.readFileSync(path.join(root, 'etc/crio/crio.conf.d/50-envhook-nri.conf'), 'utf8'), crioNriDropIn());
  t.match(fs.readFileSync(path.join(root, 'srv/nri/plugins/50-envhook'), 'utf8'), /^exec '\/usr\/local\/lib\/envhook\/envhook' nri$/m);
  t.equal(install({ runtime: 'crio', root, source, extra: nri(), env: NO_CRIO }).stdout, 'nothing changed: envhook is already installed for crio (NRI plugin) under /usr/local/lib/envhook\n');
  const u = uninstall({ runtime: 'crio', root, extra: nri() });
  t.equal(u.status, 0, u.stderr);
  t.same(snapshot(root), original, 'every file as before');
});

t.test('a later drop-in that turns NRI off: refused, nothing written', async (t) => {
  const { root, source } = installRoot(t, { 'etc/crio/crio.conf.d/90-admin.conf': '[crio.nri]\nenable_nri = false\n' });
  const before = snapshot(root);
  const r = install({ runtime: 'crio', root, source, extra: nri(), env: NO_CRIO });
  t.equal(r.status, 1);
  t.equal(r.stderr, 'envhook: /etc/crio/crio.conf.d/90-admin.conf sets enable_nri = false and CRI-O reads it after /etc/crio/crio.conf.d/50-envhook-nri.conf: NRI would stay off; remove that line or name a later file with --config\n');
  t.same(snapshot(root), before);
});

/** A stand-in `crio` printing `out` as `crio config` would, beside the host root. */
function standIn(root: string, out: string): string {
  const f = path.join(path.dirname(root), 'crio');
  fs.writeFileSync(f, `#!/bin/sh\nprintf '%s' '${out}'\n`, { mode: 0o755 });
  return f;
}

t.test('the check: crio config shows NRI on with that plugin dir', async (t) => {
  const { root, source } = installRoot(t, {});
  const crio = standIn(root, '[crio.nri]\nenable_nri = true\nnri_plugin_dir = "/opt/nri/plugins"\n');
  const r = install({ runtime: 'crio', root, source, extra: nri(['--crio', crio]), env: NO_CRIO });
  t.equal(r.status, 0, r.stderr);
  t.match(r.stdout, /^checked: crio config shows NRI on, with plugins from \/opt\/nri\/plugins$/m);
});

t.test('the check fails: every file back', async (t) => {
  const { root, source } = installRoot(t, {});
  const crio = standIn(root, '[crio.nri]\nenable_nri = false\n');
  const before = snapshot(root);
  const f = install({ runtime: 'crio', root, source, extra: nri(['--crio', crio]), env: NO_CRIO });
  t.equal(f.status, 1);
  t.equal(f.stderr, 'envhook: crio config: enable_nri is not true; nri_plugin_dir is not /opt/nri/plugins; every file is back as it was\n');
  t.same(snapshot(root), before, 'every file back');
});
