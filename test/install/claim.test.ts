// One install per runtime and mode (src/install/claim.ts): an install from another --prefix is
// refused with the first one's prefix and what to do, --take-over moves the registration, the
// taken-over prefix's uninstall refuses, and a reinstall from the same prefix (an upgrade) goes
// on. Run as the admin runs them (dist/envhook.cjs), on fixture roots: containerd with no binary
// (its shim and its NRI plugin), CRI-O with the crio double (test/helpers/install/crio.ts).
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { hostFiles, install, installRoot, snapshot, uninstall } from '../helpers/install/install.ts';
import { crioDouble } from '../helpers/install/crio.ts';

const OTHER = ['--prefix', '/opt/other'];
const DEFAULT = '/usr/local/lib/envhook';

t.test('containerd runtime handler: refused from another prefix; --take-over; the first one then refuses to uninstall', async (t) => {
  const { root, source } = installRoot(t, { 'etc/containerd/config.toml': 'version = 2\n' });
  const original = snapshot(root);
  t.equal(install({ runtime: 'containerd', root, source }).status, 0);
  const installed = snapshot(root);

  const second = install({ runtime: 'containerd', root, source, extra: OTHER });
  t.equal(second.status, 1);
  t.equal(second.stdout, '');
  t.equal(
    second.stderr,
    `envhook: containerd's runtime handler is already installed under ${DEFAULT} (in /etc/containerd/config.toml): uninstall that one first (envhook uninstall --runtime containerd --root ${root} --prefix ${DEFAULT}), or pass --take-over to move it under /opt/other\n`,
  );
  t.same(snapshot(root), installed, 'nothing written');

  const again = install({ runtime: 'containerd', root, source });
  t.equal(again.stdout, `nothing changed: envhook is already installed for containerd under ${DEFAULT}\n`, 'the same prefix reinstalls');

  const took = install({ runtime: 'containerd', root, source, extra: [...OTHER, '--take-over'] });
  t.equal(took.status, 0, took.stderr);
  t.match(
    took.stdout,
    `\nnote: took containerd's runtime handler over from the install under ${DEFAULT} (/etc/containerd/config.toml): that install's uninstall now refuses; remove ${DEFAULT} by hand to keep this one\n`,
  );
  t.match(fs.readFileSync(path.join(root, 'etc/containerd/config.toml'), 'utf8'), 'BinaryName = "/opt/other/envhook-runtime"');
  t.notOk(fs.existsSync(path.join(root, 'opt/other/backup')), "envhook's block is not the admin's: no backup of it");
  const tookOver = snapshot(root);

  const first = uninstall({ runtime: 'containerd', root });
  t.equal(first.status, 1);
  t.equal(
    first.stderr,
    `envhook: containerd's runtime handler in /etc/containerd/config.toml is the install's under /opt/other now, which took it over: uninstall that one first (envhook uninstall --runtime containerd --root ${root} --prefix /opt/other), or remove ${DEFAULT} by hand to keep it\n`,
  );
  t.same(snapshot(root), tookOver, 'nothing removed');
  const back = install({ runtime: 'containerd', root, source });
  t.equal(back.status, 1, 'the first prefix cannot take it back unasked either');
  t.match(back.stderr, `envhook: containerd's runtime handler is already installed under /opt/other (in /etc/containerd/config.toml): `);

  t.equal(uninstall({ runtime: 'containerd', root, extra: OTHER }).status, 0);
  const last = uninstall({ runtime: 'containerd', root });
  t.equal(last.status, 0, last.stderr);
  t.same(snapshot(root), original, 'both uninstalled, in that order: the node as it was');
});

t.test('containerd NRI plugin: another prefix and index refused; --take-over leaves one plugin', async (t) => {
  const { root, source } = installRoot(t, { 'etc/containerd/config.toml': 'version = 3\n' });
  const nri = ['--mode', 'nri'];
  t.equal(install({ runtime: 'containerd', root, source, extra: nri }).status, 0);
  const second = install({ runtime: 'containerd', root, source, extra: [...nri, '--index', '40', ...OTHER] });
  t.equal(second.status, 1);
  t.equal(
    second.stderr,
    `envhook: containerd's NRI plugin is already installed under ${DEFAULT} (in /opt/nri/plugins/50-envhook): uninstall that one first (envhook uninstall --runtime containerd --mode nri --root ${root} --prefix ${DEFAULT}), or pass --take-over to move it under /opt/other\n`,
  );
  t.same(fs.readdirSync(path.join(root, 'opt/nri/plugins')), ['50-envhook']);
  const shim = install({ runtime: 'containerd', root, source, extra: OTHER });
  t.equal(shim.status, 0, 'the other mode is another install: ' + shim.stderr);

  const took = install({ runtime: 'containerd', root, source, extra: [...nri, '--index', '40', ...OTHER, '--take-over'] });
  t.equal(took.status, 0, took.stderr);
  t.match(took.stdout, /^remove \/opt\/nri\/plugins\/50-envhook$/m);
  t.same(fs.readdirSync(path.join(root, 'opt/nri/plugins')), ['40-envhook'], 'one envhook plugin, the new one');
  t.match(fs.readFileSync(path.join(root, 'opt/nri/plugins/40-envhook'), 'utf8'), "exec '/opt/other/envhook' nri");
  // the first install's plugin is gone: its uninstall removes its own files and leaves the other's
  const first = uninstall({ runtime: 'containerd', root, extra: nri });
  t.equal(first.status, 0, first.stderr);
  t.same(fs.readdirSync(path.join(root, 'opt/nri/plugins')), ['40-envhook']);
  t.notOk(fs.existsSync(path.join(root, DEFAULT)), 'the first prefix is gone');
});

t.test('CRI-O runtime handler, checked by crio config: refused, taken over, the first uninstall refused', async (t) => {
  const { root, source } = installRoot(t, {});
  hostFiles(root, { 'etc/crio/crio.conf': '[crio]\n' });
  const crio = ['--crio', crioDouble(path.dirname(root)).bin];
  t.equal(install({ runtime: 'crio', root, source, extra: crio }).status, 0);
  const second = install({ runtime: 'crio', root, source, extra: [...crio, ...OTHER] });
  t.equal(second.status, 1);
  t.equal(
    second.stderr,
    `envhook: CRI-O's runtime handler is already installed under ${DEFAULT} (in /usr/share/containers/oci/hooks.d/envhook-createruntime.json): uninstall that one first (envhook uninstall --runtime crio --root ${root} --prefix ${DEFAULT}), or pass --take-over to move it under /opt/other\n`,
  );
  const took = install({ runtime: 'crio', root, source, extra: [...crio, ...OTHER, '--take-over'] });
  t.equal(took.status, 0, took.stderr);
  t.match(took.stdout, '\nchecked: crio config shows the runtime handler "envhook" with runtime_path /opt/other/envhook-runtime\n');
  t.notMatch(took.stdout, /not written by envhook/, "the first install's files are envhook's: not backed up as the admin's");
  const first = uninstall({ runtime: 'crio', root });
  t.equal(first.status, 1);
  t.equal(
    first.stderr,
    `envhook: CRI-O's runtime handler in /usr/share/containers/oci/hooks.d/envhook-createruntime.json is the install's under /opt/other now, which took it over: uninstall that one first (envhook uninstall --runtime crio --root ${root} --prefix /opt/other), or remove ${DEFAULT} by hand to keep it\n`,
  );
  const upgrade = install({ runtime: 'crio', root, source, extra: [...crio, ...OTHER] });
  t.equal(
    upgrade.stdout.split('\n')[0],
    'nothing changed: envhook is already installed for crio under /opt/other',
    'the new prefix reinstalls',
  );
});
