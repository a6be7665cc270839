// <prefix>/envhook-runtime.conf: the real runtime the front execs, resolved by install (a path
// as given once checked under --root, a name on install's PATH under --root, envhook fronts
// skipped, else the name); one line the front reads as data. Written before the front, removed
// by uninstall. A path that is missing, not executable or a front is refused before any write.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { frontConfTarget, runtimeSetting } from '../../src/install/front-conf.ts';
import { makeLayout } from '../../src/install/layout.ts';
import { FRONT_MARKER } from '../../src/oci/runtime-binary.ts';
import { fakeSource, hostFiles, install, snapshot, uninstall } from '../helpers/install/install.ts';
import { refused } from '../helpers/refusal.ts';

const PATH = '/usr/local/bin:/usr/sbin:/usr/bin:relative';
const FLAG = '--oci-runtime';
const TODO = "name the OCI runtime's executable (e.g. --oci-runtime /usr/sbin/runc) or its name to look up on PATH";
const runtimeLine = (buf: Buffer) => buf.toString('utf8').split('\n')[0];

function root(dir: string, files: Record<string, string>): string {
  const r = path.join(dir, 'root');
  hostFiles(r, files);
  for (const f of Object.keys(files)) fs.chmodSync(path.join(r, f), 0o755);
  return r;
}

/** A root holding `files` (executable), a fixture source, the root's snapshot, and install's PATH. */
function installScene(dir: string, files: Record<string, string>) {
  const r = root(dir, files);
  return { r, source: fakeSource(path.join(dir, 'src')), original: snapshot(r), env: { PATH: '/usr/sbin:/usr/bin' } };
}

t.test('a name: the first executable file of that name on PATH under --root, fronts skipped', async (t) => {
  const r = root(t.testdir({}), {
    'usr/local/bin/runc': `#!/bin/sh\n# ${FRONT_MARKER} an admin's front as runc\n`,
    'usr/sbin/runc': 'ELF',
    'usr/bin/runc': 'ELF',
    'usr/bin/crun/x': '',
    'opt/runc/runc': 'ELF',
  });
  const layout = makeLayout('containerd', { root: r });
  const conf = frontConfTarget(layout, 'runc', FLAG, PATH);
  t.equal(conf.target.file, '/usr/local/lib/envhook/envhook-runtime.conf');
  t.equal(runtimeLine(conf.target.content), 'runtime=/usr/sbin/runc', 'a host path, the front skipped');
  t.equal(conf.note, undefined);
  t.match(
    conf.target.content.toString('utf8'),
    /^runtime=\/usr\/sbin\/runc\n(# [^\n]*\n)+$/,
    'the runtime line first (the front stops there), comments after',
  );
  const crun = frontConfTarget(layout, 'crun', FLAG, PATH);
  t.equal(runtimeLine(crun.target.content), 'runtime=crun', 'a directory of that name is no runtime: the name stays');
  t.equal(
    crun.note,
    `runtime "crun" not found on PATH under --root, nor in /usr/local/sbin, /usr/local/bin, /usr/sbin, /usr/bin, /sbin, /bin: the front looks it up on the container runtime's PATH`,
  );
  fs.chmodSync(path.join(r, 'usr/sbin/runc'), 0o644);
  t.equal(runtimeLine(frontConfTarget(layout, 'runc', FLAG, PATH).target.content), 'runtime=/usr/bin/runc', 'not executable: skipped');
  t.equal(runtimeLine(frontConfTarget(layout, '/opt/runc/runc', FLAG, PATH).target.content), 'runtime=/opt/runc/runc', 'a path as given');
  t.throws(() => frontConfTarget(layout, '/opt/a\nruntime=/b', FLAG, PATH), { message: 'the runtime setting must be one line' });
});

t.test("runtimeSetting: config.json's runtime, if any", async (t) => {
  t.equal(runtimeSetting(Buffer.from('{"runtime": "crun", "logLevel": "debug"}')), 'crun');
  t.equal(runtimeSetting(Buffer.from('{"logLevel": "debug"}')), undefined);
  t.equal(runtimeSetting(Buffer.from('{"runtime": 5}')), undefined);
  t.equal(runtimeSetting(Buffer.from('not json')), undefined);
  t.equal(runtimeSetting(undefined), undefined);
});

t.test('install writes it from --oci-runtime, else config.json, else runc; uninstall removes it', async (t) => {
  const { r, source, original, env } = installScene(t.testdir({}), { 'usr/bin/crun': 'ELF', 'usr/sbin/runc': 'ELF' });
  const conf = () => runtimeLine(fs.readFileSync(path.join(r, 'usr/local/lib/envhook/envhook-runtime.conf')));
  let res = install({ runtime: 'containerd', root: r, source, env, extra: ['--dry-run'] });
  t.match(
    res.stdout,
    /would create \/usr\/local\/lib\/envhook\/envhook-runtime\.conf\n[^]*\n\+runtime=\/usr\/sbin\/runc\n[^]*would create \/usr\/local\/lib\/envhook\/envhook-runtime\n/,
    'a diff of it, before the front',
  );
  res = install({ runtime: 'containerd', root: r, source, env });
  t.equal(res.status, 0, res.stderr);
  t.equal(conf(), 'runtime=/usr/sbin/runc');
  res = install({ runtime: 'containerd', root: r, source, env, extra: ['--oci-runtime', 'crun'] });
  t.equal(res.status, 0, res.stderr);
  t.equal(conf(), 'runtime=/usr/bin/crun', '--oci-runtime');
  t.equal(install({ runtime: 'containerd', root: r, source, env }).status, 0);
  t.equal(conf(), 'runtime=/usr/bin/crun', "a reinstall without it: config.json's, which install wrote");
  t.equal(uninstall({ runtime: 'containerd', root: r }).status, 0);
  t.same(snapshot(r), original, 'nothing left');
});

t.test('a path: checked under --root; missing, not executable, a directory, a front or relative is refused', async (t) => {
  const r = root(t.testdir({}), { 'usr/sbin/runc': 'ELF', 'usr/sbin/plain': 'ELF', 'usr/sbin/front': `#!/bin/sh\n# ${FRONT_MARKER} x\n` });
  fs.chmodSync(path.join(r, 'usr/sbin/plain'), 0o644);
  fs.mkdirSync(path.join(r, 'usr/sbin/dir'));
  const layout = makeLayout('containerd', { root: r });
  t.equal(runtimeLine(frontConfTarget(layout, '/usr/sbin/runc', FLAG, PATH).target.content), 'runtime=/usr/sbin/runc');
  const cases = {
    '/nonexistent/runc': 'no such file under --root',
    '/usr/sbin/plain': 'not an executable file under --root',
    '/usr/sbin/dir': 'not an executable file under --root',
    '/usr/sbin/front': 'an envhook front, not a real runtime',
    'sbin/runc': 'a relative path',
  };
  for (const [file, why] of Object.entries(cases))
    t.throws(() => frontConfTarget(layout, file, FLAG, PATH), { message: `--oci-runtime ${file}: ${why}: ${TODO}` }, file);
  t.throws(() => frontConfTarget(layout, '/usr/sbin/plain', '/etc/envhook/config.json: runtime', PATH), {
    message: `/etc/envhook/config.json: runtime /usr/sbin/plain: not an executable file under --root: ${TODO}`,
  });
  const plain = path.join(r, 'usr/sbin/plain');
  t.throws(
    () => frontConfTarget(makeLayout('containerd', { root: '/' }), plain, FLAG, PATH),
    { message: `--oci-runtime ${plain}: not an executable file: ${TODO}` },
    'the root /: no "under --root"',
  );
});

t.test('install refuses such a path before any write, --dry-run too; config.json names its own', async (t) => {
  const { r, source, original, env } = installScene(t.testdir({}), {
    'usr/sbin/runc': 'ELF',
    'etc/containerd/config.toml': 'version = 2\n',
  });
  for (const extra of [[], ['--dry-run']]) {
    const res = install({ runtime: 'containerd', root: r, source, env, extra: ['--oci-runtime', '/nonexistent/runc', ...extra] });
    refused(t, res, `envhook: --oci-runtime /nonexistent/runc: no such file under --root: ${TODO}\n`, `missing ${extra.join(' ')}`);
    t.equal(res.stdout, '', 'nothing printed as done');
    t.same(snapshot(r), original, 'no file under the root changed');
  }
  hostFiles(r, { 'etc/envhook/config.json': '{ "runtime": "/opt/gone/runc" }\n' });
  const withAdmin = snapshot(r);
  const res = install({ runtime: 'containerd', root: r, source, env });
  refused(t, res, `envhook: /etc/envhook/config.json: runtime /opt/gone/runc: no such file under --root: ${TODO}\n`, "config.json's");
  t.same(snapshot(r), withAdmin, "config.json's: no file under the root changed");
  const ok = install({ runtime: 'containerd', root: r, source, env, extra: ['--oci-runtime', '/usr/sbin/runc'] });
  t.equal(ok.status, 0, ok.stderr);
  t.equal(runtimeLine(fs.readFileSync(path.join(r, 'usr/local/lib/envhook/envhook-runtime.conf'))), 'runtime=/usr/sbin/runc');
});
