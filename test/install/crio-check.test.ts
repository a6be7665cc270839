// The check after a CRI-O install. CRI-O is not installable on this machine: a stand-in `crio`
// on PATH records its arguments and prints a fixture of `crio config` output written here; the
// tests show which arguments install passes, that a reading with the handler is accepted, and
// that a reading without it (or with a hooks_dir that misses envhook's file) is refused with
// every file put back. The next step printed is a restart, never a reload.
import t, { type Test } from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { fakeSource, hostFiles, install, snapshot } from '../helpers/install.ts';

const FRONT = '/usr/local/lib/envhook/envhook-runtime';
const config = (handler: boolean, hooksDir = '/usr/share/containers/oci/hooks.d') =>
  [
    '[crio.runtime]',
    'default_runtime = "runc"',
    `hooks_dir = ["${hooksDir}"]`,
    '[crio.runtime.runtimes.runc]',
    'runtime_path = "/usr/libexec/crio/runc"',
    'runtime_type = "oci"',
    ...(handler ? ['[crio.runtime.runtimes.envhook]', `runtime_path = "${FRONT}"`, 'runtime_type = "oci"', 'runtime_root = "/run/runc"'] : []),
    '',
  ].join('\n');

function setup(t: Test, output: string) {
  const dir = t.testdir({ bin: {} });
  const root = path.join(dir, 'root');
  hostFiles(root, { 'etc/crio/crio.conf': '[crio]\n' });
  fs.writeFileSync(path.join(dir, 'fixture.toml'), output);
  const args = path.join(dir, 'args');
  fs.writeFileSync(path.join(dir, 'bin/crio'), `#!/bin/sh\nprintf '%s\\n' "$@" > ${JSON.stringify(args)}\ncat ${JSON.stringify(path.join(dir, 'fixture.toml'))}\n`, { mode: 0o755 });
  const env = { PATH: `${path.join(dir, 'bin')}:${process.env.PATH}` };
  return { root, env, source: fakeSource(path.join(dir, 'src')), original: snapshot(root), args: () => fs.readFileSync(args, 'utf8').trim().split('\n') };
}

t.test('crio config shows the handler: said; the next step is a restart', async (t) => {
  const { root, env, source, args } = setup(t, config(true));
  const r = install({ runtime: 'crio', root, source, env });
  t.equal(r.status, 0, r.stderr);
  t.same(args(), ['--config', path.join(root, 'etc/crio/crio.conf'), '--config-dir', path.join(root, 'etc/crio/crio.conf.d'), 'config']);
  t.match(r.stdout, `checked: crio config shows the runtime handler "envhook" with runtime_path ${FRONT}\n`);
  t.match(r.stdout, /^  restart CRI-O to load the handler: systemctl restart crio \(not reload: a reload does not register a new runtime handler\)$/m);
  t.notMatch(r.stdout, /systemctl reload/);
});

t.test('crio config without the handler: refused, every file back', async (t) => {
  const { root, env, source, original } = setup(t, config(false));
  const r = install({ runtime: 'crio', root, source, env });
  t.equal(r.status, 1);
  t.equal(r.stderr, 'envhook: crio config: no runtime handler "envhook"; every file is back as it was\n');
  t.same(snapshot(root), original);
});

t.test('a hooks_dir without the directory the createRuntime file went to: refused', async (t) => {
  const { root, env, source, original } = setup(t, config(true, '/etc/containers/oci/hooks.d'));
  const r = install({ runtime: 'crio', root, source, env });
  t.equal(r.status, 1);
  t.match(r.stderr, /^envhook: crio config: hooks_dir does not hold \/usr\/share\/containers\/oci\/hooks\.d \(install with --hooks-dir DIR naming one it holds\); every file is back as it was\n$/);
  t.same(snapshot(root), original);
});

t.test('no crio: not checked, and said', async (t) => {
  const dir = t.testdir({});
  const root = path.join(dir, 'root');
  fs.mkdirSync(root);
  const r = install({ runtime: 'crio', root, source: fakeSource(path.join(dir, 'src')), env: { PATH: '/nonexistent' } });
  t.equal(r.status, 0, r.stderr);
  t.match(r.stdout, /^note: not checked with CRI-O: no crio on PATH \(--crio PATH names one\)$/m);
});
