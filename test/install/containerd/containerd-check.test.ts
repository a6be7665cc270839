// The check after install, through the CLI, with a stand-in containerd whose `config dump` prints
// a fixture written here (the real binaries' dumps are test/e2e/install-containerd-layouts.test.ts):
// what containerd's reading lacks is named in one line, and every file is put back, backups and
// new directories included.
import t, { type Test } from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { fakeContainerd, fakeSource, hostFiles, install, snapshot } from '../../helpers/install/install.ts';
import { containerd2ForInstall } from '../../helpers/nri/containerd.ts';
import { addToRoot } from '../../helpers/install/node-root.ts';
import { findContainerd } from '../../../src/install/containerd/containerd-binary.ts';
import { refused } from '../../helpers/refusal.ts';

const { c2, skip2 } = containerd2ForInstall();

const ADMIN = "version = 3\n[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]\n  SystemdCgroup = true\n";
const FRONT = '/usr/local/lib/envhook/envhook-runtime';

function setup(t: Test, dump: string) {
  const dir = t.testdir({});
  const root = path.join(dir, 'root');
  hostFiles(root, { 'etc/containerd/config.toml': ADMIN });
  return { root, source: fakeSource(path.join(dir, 'src')), bin: fakeContainerd(dir, dump), original: snapshot(root) };
}

const handler = (options: string) =>
  `version = 3\n[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]\n  runtime_type = 'io.containerd.runc.v2'\n[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.envhook]\n  runtime_type = 'io.containerd.runc.v2'\n  pod_annotations = ['envhook.io/*']\n[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.envhook.options]\n${options}`;

t.test("containerd's reading shows the handler: said, and the install stands", async (t) => {
  const { root, source, bin } = setup(t, handler(`  BinaryName = '${FRONT}'\n  SystemdCgroup = true\n`));
  const r = install({ runtime: 'containerd', root, source, extra: ['--containerd', bin] });
  t.equal(r.status, 0, r.stderr);
  t.match(
    r.stdout,
    `checked: containerd 2.1.9 config dump of /etc/containerd/config.toml shows the runtime handler "envhook" with BinaryName ${FRONT} and SystemdCgroup from "runc"\n`,
  );
  t.match(fs.readFileSync(path.join(root, 'etc/containerd/config.toml'), 'utf8'), '# BEGIN envhook');
});

t.test('no handler in the dump: one line naming what is missing, every file back as it was', async (t) => {
  const { root, source, bin, original } = setup(
    t,
    "version = 3\n[plugins.'io.containerd.cri.v1.runtime'.containerd]\n  default_runtime_name = 'runc'\n",
  );
  const r = install({ runtime: 'containerd', root, source, extra: ['--containerd', bin] });
  refused(
    t,
    r,
    'envhook: containerd 2.1.9 config dump of /etc/containerd/config.toml: no runtime handler "envhook"; the default runtime "runc" is gone; every file is back as it was\n',
  );
  t.equal(r.stdout, '');
  t.same(snapshot(root), original, 'byte for byte, the backup gone too');
  t.same(fs.readdirSync(root), ['etc'], 'no directory of envhook left behind');
});

t.test('the handler without the options envhook copied: named', async (t) => {
  const { root, source, bin, original } = setup(t, handler(`  BinaryName = '/usr/bin/runc'\n  SystemdCgroup = false\n`));
  const r = install({ runtime: 'containerd', root, source, extra: ['--containerd', bin] });
  refused(
    t,
    r,
    /: options\.BinaryName is not \/usr\/local\/lib\/envhook\/envhook-runtime; options\.SystemdCgroup is not true; every file is back as it was\n$/,
  );
  t.same(snapshot(root), original);
});

t.test('a containerd that does not answer: refused before anything is written', async (t) => {
  const dir = t.testdir({});
  const root = path.join(dir, 'root');
  hostFiles(root, { 'etc/containerd/config.toml': ADMIN });
  const original = snapshot(root);
  fs.writeFileSync(path.join(dir, 'containerd'), '#!/bin/sh\nexit 3\n', { mode: 0o755 });
  const r = install({
    runtime: 'containerd',
    root,
    source: fakeSource(path.join(dir, 'src')),
    extra: ['--containerd', path.join(dir, 'containerd')],
  });
  refused(
    t,
    r,
    `envhook: --containerd ${path.join(dir, 'containerd')}: not containerd: its --version printed nothing (exit 3): name containerd's executable with --containerd, or leave --containerd out (the node's, under --root)\n`,
  );
  t.same(snapshot(root), original);
});

t.test('no containerd at all: the install says it was not checked', async (t) => {
  const dir = t.testdir({});
  const root = path.join(dir, 'root');
  hostFiles(root, { 'etc/containerd/config.toml': ADMIN });
  const r = install({ runtime: 'containerd', root, source: fakeSource(path.join(dir, 'src')), env: { PATH: '/nonexistent' } });
  t.equal(r.status, 0, r.stderr);
  t.match(
    r.stdout,
    `\nnote: not checked with containerd: no containerd under --root on PATH or in /usr/local/sbin, /usr/local/bin, /usr/sbin, /usr/bin, /sbin, /bin (--containerd PATH names one)\n`,
  );
  t.match(r.stdout, /^note: config version 3, from the root file$/m);
});

t.test(
  '--root is the node: its containerd (in a usual place, PATH empty) reads its files inside the root, absolute imports included',
  { skip: skip2 || (process.getuid?.() !== 0 && 'chroot needs root') },
  async (t) => {
    const dir = t.testdir({});
    const root = path.join(dir, 'root');
    hostFiles(root, {
      'etc/containerd/config.toml': `version = 3\nimports = ["/etc/containerd/conf.d/*.toml"]\n`,
      'etc/containerd/conf.d/10-runc.toml': ADMIN,
    });
    addToRoot(root, { '/usr/bin/containerd': c2! });
    const r = install({ runtime: 'containerd', root, source: fakeSource(path.join(dir, 'src')), env: { PATH: '' } });
    t.equal(r.status, 0, r.stderr);
    t.match(
      r.stdout,
      `\nchecked: containerd ${findContainerd(c2)!.version} config dump of /etc/containerd/config.toml shows the runtime handler "envhook" with BinaryName ${FRONT} and SystemdCgroup from "runc"\n`,
    );
    t.notMatch(r.stdout, 'not checked');
  },
);
