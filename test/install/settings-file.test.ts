// install --kubelet-root/--log-file/--log-level/--oci-runtime write /etc/envhook/config.json, the
// one place the front and envhook read settings from under every runtime (CRI-O's conmon passes
// neither CRI-O's environment nor the unit's). The admin's keys are kept and the admin's file
// comes back byte for byte at uninstall; a reinstall without the flags keeps envhook's file.
import t, { type Test } from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { fakeSource, hostFiles, install, snapshot, uninstall, crioEtc } from '../helpers/install/install.ts';
import { refused } from '../helpers/refusal.ts';

const FILE = 'etc/envhook/config.json';

function setup(t: Test, files: Record<string, string> = {}) {
  const dir = t.testdir({});
  const root = path.join(dir, 'root');
  fs.mkdirSync(root);
  hostFiles(root, files);
  crioEtc(root); // a CRI-O node
  return { root, source: fakeSource(path.join(dir, 'src')), original: snapshot(root), env: { PATH: '/nonexistent' } };
}

t.test('written from the flags; kept by a reinstall without them; removed by uninstall', async (t) => {
  // --oci-runtime as a path: install checks it is an executable file under --root
  const { root, source, original, env } = setup(t, { 'usr/sbin/runc': 'ELF' });
  fs.chmodSync(path.join(root, 'usr/sbin/runc'), 0o755);
  const r = install({
    runtime: 'crio',
    root,
    source,
    env,
    extra: [
      '--kubelet-root',
      '/data/kubelet',
      '--log-file',
      '/var/log/envhook/shim.log',
      '--log-level',
      'debug',
      '--oci-runtime',
      '/usr/sbin/runc',
    ],
  });
  t.equal(r.status, 0, r.stderr);
  t.match(r.stdout, /^create \/etc\/envhook\/config\.json$/m);
  t.same(JSON.parse(fs.readFileSync(path.join(root, FILE), 'utf8')), {
    kubeletRoot: '/data/kubelet',
    logFile: '/var/log/envhook/shim.log',
    logLevel: 'debug',
    runtime: '/usr/sbin/runc',
  });
  const again = install({ runtime: 'crio', root, source, env });
  t.equal(again.status, 0, again.stderr);
  t.match(again.stdout, /^nothing changed/, 'a reinstall without the flags keeps the file');
  t.equal(uninstall({ runtime: 'crio', root }).status, 0);
  t.same(snapshot(root), original);
});

t.test("an admin's file: its keys kept, the flag's key set, the original back at uninstall", async (t) => {
  const admin = '{ "logLevel": "warn", "envhookBin": "/opt/envhook/envhook" }\n';
  const { root, source, original, env } = setup(t, { [FILE]: admin });
  const r = install({ runtime: 'containerd', root, source, env, extra: ['--kubelet-root', '/data/kubelet'] });
  t.equal(r.status, 0, r.stderr);
  t.match(r.stdout, 'update /etc/envhook/config.json (original saved as /usr/local/lib/envhook/backup/etc/envhook/config.json)');
  t.same(JSON.parse(fs.readFileSync(path.join(root, FILE), 'utf8')), {
    logLevel: 'warn',
    envhookBin: '/opt/envhook/envhook',
    kubeletRoot: '/data/kubelet',
  });
  t.equal(uninstall({ runtime: 'containerd', root }).status, 0);
  t.same(snapshot(root), original, 'byte for byte');
});

t.test('bad settings are refused with one line, nothing written', async (t) => {
  const { root, source, original, env } = setup(t, { [FILE]: '{ not json' });
  const bad = (extra: string[], re: RegExp) => {
    const r = install({ runtime: 'crio', root, source, env, extra });
    refused(t, r, re);
    t.equal(r.stderr.split('\n').length, 2);
  };
  bad(['--kubelet-root', 'relative/kubelet'], /^envhook: --kubelet-root must be an absolute host path$/m);
  bad(['--log-level', 'loud'], /^envhook: --log-level loud: not a log level: use one of fatal, error, warn, info, debug, trace, silent$/m);
  bad(['--kubelet-root', '/data/kubelet'], /^envhook: \/etc\/envhook\/config\.json is not valid JSON: fix or remove it first$/m);
  t.same(snapshot(root), original);
});
