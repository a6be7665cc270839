// containerdPlan on real files under a test root: the block where containerd keeps it, the
// RuntimeClass, the notes (config version and its source; a check skipped and why), and the
// check itself, containerd 2.1.9's own `config dump` of the files before and after the block is
// written; --config naming a file the default root imports is refused (the admin meant --drop-in).
import t, { type Test } from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { makeLayout } from '../../../src/install/layout.ts';
import { containerdPlan } from '../../../src/install/containerd/containerd-plan.ts';
import { withBlock } from '../../../src/install/block.ts';
import { findContainerd } from '../../../src/install/containerd/containerd-binary.ts';
import { hostFiles } from '../../helpers/install/install.ts';
import { containerd2ForInstall } from '../../helpers/nri/containerd.ts';

const { c2, skip2 } = containerd2ForInstall();
const ROOT = '/etc/containerd/config.toml';

function layoutWith(t: Test, files: Record<string, string>, config?: string) {
  const root = path.join(t.testdir({}), 'root');
  hostFiles(root, files);
  return makeLayout('containerd', { root, prefix: '/opt/eh', config });
}

t.test('no containerd to ask: the block, the RuntimeClass, the next steps, the check said to be skipped', async (t) => {
  const saved = process.env.PATH;
  process.env.PATH = '/nonexistent';
  t.teardown(() => void (process.env.PATH = saved));
  const layout = layoutWith(t, { [ROOT.slice(1)]: 'version = 2\n' });
  const plan = containerdPlan(layout, {});
  t.same(
    plan.files.map((f) => [f.file, f.mode.toString(8)]),
    [['/opt/eh/runtimeclass.yaml', '644']],
  );
  t.same(
    plan.blocks.map((b) => b.file),
    [ROOT],
  );
  t.match(plan.blocks[0]!.body, /\[plugins\."io\.containerd\.grpc\.v1\.cri"\.containerd\.runtimes\.envhook\]/);
  t.same(plan.notes, [
    'config version 2, from the root file',
    `not checked with containerd: no containerd under --root on PATH or in /usr/local/sbin, /usr/local/bin, /usr/sbin, /usr/bin, /sbin, /bin (--containerd PATH names one)`,
  ]);
  t.equal(plan.verify, undefined);
  t.same(plan.next, [
    'restart containerd to load the handler: systemctl restart containerd (containerd reads its configuration only when it starts)',
    'kubectl apply -f /opt/eh/runtimeclass.yaml',
  ]);
  t.throws(() => containerdPlan(layoutWith(t, {}), { dropIn: 'conf.d/x.toml' }), { message: '--drop-in must be an absolute host path' });
});

t.test('--config naming a file the default root imports: refused, naming --drop-in', async (t) => {
  const saved = process.env.PATH;
  process.env.PATH = '/nonexistent';
  t.teardown(() => void (process.env.PATH = saved));
  const files = {
    [ROOT.slice(1)]: 'version = 2\nimports = ["/etc/containerd/conf.d/*.toml"]\n',
    'etc/containerd/conf.d/10.toml': 'version = 2\n',
  };
  for (const config of ['/etc/containerd/conf.d/10.toml', '/etc/containerd/conf.d/99-new.toml']) {
    t.throws(() => containerdPlan(layoutWith(t, files, config), {}), {
      message: `${config} is imported by ${ROOT}: --config names containerd's root file; name this file with --drop-in ${config}`,
    });
  }
  // a root of its own that the default root does not import: refused unless the service loads it
  const own = layoutWith(t, { ...files, 'srv/c.toml': 'version = 2\n' }, '/srv/c.toml');
  t.throws(() => containerdPlan(own, {}), { message: /^--config \/srv\/c\.toml: containerd loads \/etc\/containerd\/config\.toml unless/ });
  const other = containerdPlan(own, { serviceConfig: true });
  t.same(
    other.blocks.map((b) => b.file),
    ['/srv/c.toml'],
  );
});

t.test('2.1.9: the check is containerd config dump of the files, refused before the block, passed after', { skip: skip2 }, async (t) => {
  const layout = layoutWith(t, { [ROOT.slice(1)]: 'version = 3\n' });
  const plan = containerdPlan(layout, { containerd: c2 });
  const version = findContainerd(c2)!.version;
  t.same(plan.notes, ['config version 3, from the root file']);
  t.throws(() => plan.verify!(), { message: `containerd ${version} config dump of ${ROOT}: no runtime handler "envhook"` });
  const block = plan.blocks[0]!;
  fs.writeFileSync(layout.real(ROOT), withBlock('version = 3\n', block.body, ROOT));
  t.equal(
    plan.verify!(),
    `checked: containerd ${version} config dump of ${ROOT} shows the runtime handler "envhook" with BinaryName /opt/eh/envhook-runtime`,
  );
});

t.test('2.1.9: absolute imports under a --root: not checked, and why', { skip: skip2 }, async (t) => {
  const layout = layoutWith(t, { [ROOT.slice(1)]: 'version = 3\nimports = ["/etc/containerd/conf.d/*.toml"]\n' });
  const plan = containerdPlan(layout, { containerd: c2 });
  t.equal(plan.verify, undefined);
  t.same(plan.notes, [
    'config version 3, from the root file',
    `not checked with containerd: the files import absolute paths, which containerd would read outside --root ${layout.root}`,
  ]);
});
