// The layout: every path install writes, as host paths under --prefix, mapped under --root; the
// backup of an admin's file under the prefix's backup directory; --prefix and --config checked.
import t from 'tap';
import { absolute, backupPath, DEFAULT_CONFIG, makeLayout } from '../../src/install/layout.ts';

t.test('defaults: /usr/local/lib/envhook and the config of each runtime', async (t) => {
  const l = makeLayout('crio', {});
  t.equal(l.root, '/');
  t.equal(l.prefix, '/usr/local/lib/envhook');
  t.equal(l.config, DEFAULT_CONFIG.crio);
  t.equal(l.bin, '/usr/local/lib/envhook/envhook');
  t.equal(l.front, '/usr/local/lib/envhook/envhook-runtime');
  t.equal(l.state, '/usr/local/lib/envhook/state.json');
  t.equal(makeLayout('containerd', {}).config, '/etc/containerd/config.toml');
  t.equal(makeLayout('podman', {}).config, '/etc/containers/containers.conf.d/50-envhook.conf');
});

t.test('--prefix, --config normalised; real() maps a host path under --root', async (t) => {
  const l = makeLayout('containerd', { root: '/tmp/r/../root', prefix: '/srv//envhook', config: '/etc/c/./x.toml' });
  t.equal(l.root, '/tmp/root');
  t.equal(l.prefix, '/srv/envhook');
  t.equal(l.config, '/etc/c/x.toml');
  t.same(
    [l.bin, l.front, l.conf, l.lib, l.libMain, l.podmanHooksDir, l.runtimeClass, l.state, l.backupDir],
    [
      '/srv/envhook/envhook',
      '/srv/envhook/envhook-runtime',
      '/srv/envhook/envhook-runtime.conf',
      '/srv/envhook/envhook.cjs',
      '/srv/envhook/envhook-main.cjs',
      '/srv/envhook/hooks.d',
      '/srv/envhook/runtimeclass.yaml',
      '/srv/envhook/state.json',
      '/srv/envhook/backup',
    ],
  );
  t.equal(l.real('/etc/containerd/config.toml'), '/tmp/root/etc/containerd/config.toml');
  t.equal(backupPath(l, '/etc/crio/crio.conf.d/10.conf'), '/srv/envhook/backup/etc/crio/crio.conf.d/10.conf');
});

t.test('relative paths and / are refused, naming the flag', async (t) => {
  t.throws(() => makeLayout('crio', { prefix: 'opt/envhook' }), { message: '--prefix must be an absolute host path' });
  t.throws(() => makeLayout('crio', { config: 'x.conf' }), { message: '--config must be an absolute host path' });
  t.throws(() => makeLayout('crio', { prefix: '/a/..' }), { message: '--prefix must not be /' });
  t.throws(() => absolute('/', '--drop-in'), { message: '--drop-in must not be /' });
  t.equal(absolute('/a/b/../c', '--x'), '/a/c');
});
