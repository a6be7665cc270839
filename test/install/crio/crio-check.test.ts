// The check after a CRI-O install. CRI-O is not installable on this machine: the `crio` double
// of test/helpers/install/crio.ts (--crio) records its arguments and prints `crio config` from the files as
// CRI-O does (defaults commented out); the tests show which arguments install passes, that a
// reading with the handler is accepted, and that a reading with another handler (or with a
// hooks_dir, set or CRI-O's default, that misses envhook's file) is refused with every file put
// back. The next step printed is a restart, never a reload.
import t, { type Test } from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { fakeSource, hostFiles, install, snapshot } from '../../helpers/install/install.ts';
import { crioDouble } from '../../helpers/install/crio.ts';
import { refused } from '../../helpers/refusal.ts';

const FRONT = '/usr/local/lib/envhook/envhook-runtime';

/** A host root holding `files`, and the crio double of this machine named with --crio. */
function setup(t: Test, files: Record<string, string> = {}) {
  const dir = t.testdir({ bin: {} });
  const root = path.join(dir, 'root');
  hostFiles(root, { 'etc/crio/crio.conf': '[crio]\n', ...files });
  const crio = crioDouble(path.join(dir, 'bin'));
  const env = ['--crio', crio.bin];
  return { root, env, source: fakeSource(path.join(dir, 'src')), original: snapshot(root), args: crio.args };
}

t.test('crio config shows the handler: said; the next step is a restart', async (t) => {
  const { root, env, source, args } = setup(t);
  const r = install({ runtime: 'crio', root, source, extra: env });
  t.equal(r.status, 0, r.stderr);
  t.same(args(), ['--config', path.join(root, 'etc/crio/crio.conf'), '--config-dir', path.join(root, 'etc/crio/crio.conf.d'), 'config']);
  t.match(r.stdout, `checked: crio config shows the runtime handler "envhook" with runtime_path ${FRONT}\n`);
  t.match(
    r.stdout,
    /^  restart CRI-O to load the handler: systemctl restart crio \(not reload: a reload does not register a new runtime handler\)$/m,
  );
  t.notMatch(r.stdout, /systemctl reload/);
});

t.test('a later drop-in replacing the handler: refused, every file back', async (t) => {
  const { root, env, source, original } = setup(t, {
    'etc/crio/crio.conf.d/90-admin.conf': '[crio.runtime.runtimes.envhook]\nruntime_path = "/usr/sbin/runc"\n',
  });
  const r = install({ runtime: 'crio', root, source, extra: env });
  refused(t, r, `envhook: crio config: runtime_path is not ${FRONT}; every file is back as it was\n`);
  t.same(snapshot(root), original);
});

t.test('a hooks_dir without the directory the createRuntime file went to: refused', async (t) => {
  const { root, env, source, original } = setup(t, {
    'etc/crio/crio.conf': '[crio.runtime]\nhooks_dir = ["/etc/containers/oci/hooks.d"]\n',
  });
  const r = install({ runtime: 'crio', root, source, extra: env });
  refused(
    t,
    r,
    'envhook: crio config: hooks_dir does not hold /usr/share/containers/oci/hooks.d (install with --hooks-dir DIR naming one it holds); every file is back as it was\n',
  );
  t.same(snapshot(root), original);
});

t.test("CRI-O's default hooks_dir (printed commented out) is read: --hooks-dir naming another directory refused", async (t) => {
  const { root, env, source, original } = setup(t);
  const r = install({ runtime: 'crio', root, source, extra: [...env, '--hooks-dir', '/etc/containers/oci/hooks.d'] });
  refused(
    t,
    r,
    'envhook: crio config: hooks_dir does not hold /etc/containers/oci/hooks.d (install with --hooks-dir DIR naming one it holds); every file is back as it was\n',
  );
  t.same(snapshot(root), original);
});

t.test('no CRI-O at all (no crio, no /etc/crio): refused, naming both, for either mode and --dry-run; nothing written', async (t) => {
  const dir = t.testdir({});
  const root = path.join(dir, 'root');
  fs.mkdirSync(root);
  const source = fakeSource(path.join(dir, 'src'));
  for (const extra of [['--dry-run'], [], ['--mode', 'nri', '--dry-run'], ['--mode', 'nri']]) {
    const r = install({ runtime: 'crio', root, source, extra, env: { PATH: '/nonexistent' } });
    refused(
      t,
      r,
      'envhook: CRI-O is not installed: no crio under --root on PATH or in /usr/local/sbin, /usr/local/bin, /usr/sbin, /usr/bin, /sbin, /bin, and no /etc/crio under --root: install CRI-O first (or name its binary with --crio PATH)\n',
      extra.join(' ') || 'install',
    );
    t.equal(r.stdout, '');
  }
  t.same(fs.readdirSync(root), [], 'nothing written');
});

t.test('no crio but its /etc/crio: not checked, and said', async (t) => {
  const dir = t.testdir({});
  const root = path.join(dir, 'root');
  fs.mkdirSync(path.join(root, 'etc/crio'), { recursive: true });
  const r = install({ runtime: 'crio', root, source: fakeSource(path.join(dir, 'src')), env: { PATH: '/nonexistent' } });
  t.equal(r.status, 0, r.stderr);
  t.match(
    r.stdout,
    `\nnote: not checked with CRI-O: no crio under --root on PATH or in /usr/local/sbin, /usr/local/bin, /usr/sbin, /usr/bin, /sbin, /bin (--crio PATH names one); read from its files instead (crio.conf, crio.conf.d), not crio config: no hooks_dir set, CRI-O's default /usr/share/containers/oci/hooks.d\n`,
  );
});
