// The systemd unit of envhook watch, as the runtime handler's install writes it (the built CLI
// under --root, as an admin runs it): the unit byte for byte, the lines install and uninstall
// print (the file, the next steps the admin types: this machine runs no systemd, and install never
// runs systemctl), systemd's own reading of the unit (`systemd-analyze verify`, Debian's systemd),
// the unit shared by the containerd and CRI-O handler installs and removed with the last, the
// root byte for byte as before; the NRI plugin and Podman get no unit.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { crioEtc, install, installRoot, snapshot, uninstall } from '../helpers/install/install.ts';
import { refused } from '../helpers/refusal.ts';

const UNIT = 'etc/systemd/system/envhook-watch.service';
const EXPECTED = [
  '# Written by envhook install; removed by envhook uninstall.',
  "# envhook watch keeps the owners of volumes (envhook.io/volumeOwners) across the kubelet's",
  '# rewrites for the containers the runtime handler "envhook" started.',
  '[Unit]',
  "Description=envhook owner watcher (volume owners across the kubelet's rewrites)",
  'After=local-fs.target',
  '',
  '[Service]',
  'ExecStart=/usr/local/lib/envhook/envhook watch',
  'Restart=always',
  'RestartSec=1',
  '',
  '[Install]',
  'WantedBy=multi-user.target',
  '',
].join('\n');
const START = '  start the owner watcher: systemctl daemon-reload && systemctl enable --now envhook-watch.service';
const STOP = '  stop the owner watcher: systemctl disable --now envhook-watch.service && systemctl daemon-reload';
const NO_RUNTIME = { PATH: '/nonexistent' };
const ANALYZE = spawnSync('systemd-analyze', ['--version']).status === 0;

t.test('containerd and CRI-O handler installs: the unit, the next steps, shared; the last uninstall removes it', async (t) => {
  const { root, source } = installRoot(t, { 'etc/containerd/config.toml': 'version = 2\n' });
  crioEtc(root);
  const original = snapshot(root);
  const r = install({ runtime: 'containerd', root, source, env: NO_RUNTIME });
  t.equal(r.status, 0, r.stderr);
  const out = r.stdout.split('\n');
  t.ok(out.includes('create /etc/systemd/system/envhook-watch.service'), 'the create line');
  t.same(out.slice(out.indexOf('next:')), [
    'next:',
    '  restart containerd to load the handler: systemctl restart containerd (containerd reads its configuration only when it starts)',
    '  kubectl apply -f /usr/local/lib/envhook/runtimeclass.yaml',
    START,
    '',
  ]);
  t.equal(fs.readFileSync(path.join(root, UNIT), 'utf8'), EXPECTED, 'the unit, byte for byte');
  t.equal(fs.statSync(path.join(root, UNIT)).mode & 0o777, 0o644);

  const crio = install({ runtime: 'crio', root, source, env: NO_RUNTIME });
  t.equal(crio.status, 0, crio.stderr);
  t.match(crio.stdout, `\n${START}\n`);
  const u1 = uninstall({ runtime: 'containerd', root });
  t.equal(u1.status, 0, u1.stderr);
  t.ok(fs.existsSync(path.join(root, UNIT)), 'kept while the CRI-O handler needs it');
  t.notMatch(u1.stdout, /owner watcher/, 'no stop line while the unit stays');
  const u2 = uninstall({ runtime: 'crio', root });
  t.equal(u2.status, 0, u2.stderr);
  const out2 = u2.stdout.split('\n');
  t.ok(out2.includes('remove /etc/systemd/system/envhook-watch.service'), 'the remove line');
  t.ok(out2.includes(STOP), u2.stdout);
  t.same(snapshot(root), original, 'every file and directory as before');
});

t.test(
  "systemd's own reading: systemd-analyze verify finds nothing to say",
  { skip: ANALYZE ? false : 'systemd-analyze not installed (apt-get install systemd)' },
  async (t) => {
    const { root, source } = installRoot(t, { 'etc/containerd/config.toml': 'version = 2\n' });
    t.equal(install({ runtime: 'containerd', root, source, env: NO_RUNTIME }).status, 0);
    // verify checks that ExecStart's program exists on this machine: point it at the installed one
    const unit = path.join(path.dirname(root), 'envhook-watch.service'); // beside the root, outside it
    const bin = path.join(root, 'usr/local/lib/envhook/envhook');
    t.ok(fs.statSync(bin).mode & 0o111, 'the program the unit runs is installed, executable');
    fs.writeFileSync(
      unit,
      fs.readFileSync(path.join(root, UNIT), 'utf8').replace('ExecStart=/usr/local/lib/envhook/envhook', `ExecStart=${bin}`),
    );
    const v = spawnSync('systemd-analyze', ['verify', unit], { encoding: 'utf8' });
    t.equal(v.status, 0, v.stderr);
    t.equal(v.stderr, '', 'no warning (an unknown key, a bad value)');
    // the check can fail: a key systemd does not know is reported
    fs.writeFileSync(unit, fs.readFileSync(unit, 'utf8').replace('RestartSec=1', 'RestartSecs=1'));
    t.match(spawnSync('systemd-analyze', ['verify', unit], { encoding: 'utf8' }).stderr, /Unknown key 'RestartSecs'/);
  },
);

t.test('--no-watch-unit: no unit, no start line; refused where there is no unit to leave out', async (t) => {
  const { root, source } = installRoot(t, { 'etc/containerd/config.toml': 'version = 2\n' });
  const r = install({ runtime: 'containerd', root, source, extra: ['--no-watch-unit'], env: NO_RUNTIME });
  t.equal(r.status, 0, r.stderr);
  t.notMatch(r.stdout, /envhook-watch|owner watcher/);
  t.notOk(fs.existsSync(path.join(root, UNIT)));
  const before = snapshot(root);
  refused(
    t,
    install({ runtime: 'containerd', root, source, extra: ['--mode', 'nri', '--no-watch-unit'], env: NO_RUNTIME }),
    'envhook: --no-watch-unit is only valid with the runtime handler of containerd or CRI-O (the NRI plugin watches itself)\n',
  );
  t.same(snapshot(root), before, 'nothing written');
});

t.test('the NRI plugin and Podman: no unit', async (t) => {
  const { root, source } = installRoot(t, { 'etc/containerd/config.toml': 'version = 2\n' });
  const r = install({ runtime: 'containerd', root, source, extra: ['--mode', 'nri'], env: NO_RUNTIME });
  t.equal(r.status, 0, r.stderr);
  t.notMatch(r.stdout, /envhook-watch|owner watcher/);
  t.notOk(fs.existsSync(path.join(root, UNIT)));
  const p = install({ runtime: 'podman', root, source, env: NO_RUNTIME });
  t.equal(p.status, 0, p.stderr);
  t.notOk(fs.existsSync(path.join(root, UNIT)));
});
