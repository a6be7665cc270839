// podmanPlan on real files under a test root: both hooks.d files in envhook's own directory, and
// a containers.conf.d drop-in whose hooks_dir restates the list Podman would use (its defaults,
// the main files, then drop-ins in name order, envhook's own drop-in left out) with envhook's last.
import t, { type Test } from 'tap';
import path from 'node:path';
import { makeLayout, PODMAN_DEFAULT_HOOKS_DIRS } from '../../../src/install/layout.ts';
import { podmanPlan } from '../../../src/install/podman/podman-plan.ts';
import { parseToml } from '../../../src/install/toml.ts';
import { hostFiles } from '../../helpers/install/install.ts';

function planFor(t: Test, files: Record<string, string>) {
  const root = path.join(t.testdir({}), 'root');
  hostFiles(root, files);
  return podmanPlan(makeLayout('podman', { root, prefix: '/opt/eh' }), {});
}
const hooksDir = (plan: ReturnType<typeof podmanPlan>) => (parseToml(plan.files[2]!.content.toString(), 'drop-in').engine as any).hooks_dir;

t.test('no admin setting: Podman defaults, then envhook; precreate and createRuntime files in its directory', async (t) => {
  const plan = planFor(t, {});
  t.same(
    plan.files.map((f) => f.file),
    [
      '/opt/eh/hooks.d/envhook-precreate.json',
      '/opt/eh/hooks.d/envhook-createruntime.json',
      '/etc/containers/containers.conf.d/50-envhook.conf',
    ],
  );
  t.same(JSON.parse(plan.files[0]!.content.toString()).stages, ['precreate']);
  t.same(JSON.parse(plan.files[1]!.content.toString()).stages, ['createRuntime']);
  t.same(hooksDir(plan), [...PODMAN_DEFAULT_HOOKS_DIRS, '/opt/eh/hooks.d']);
  t.same(plan.blocks, []);
  t.match(plan.next[0], /no restart needed/);
});

t.test("the admin's list wins over the main file, the last drop-in in name order over both; ours is skipped", async (t) => {
  const plan = planFor(t, {
    'usr/share/containers/containers.conf': '[engine]\nhooks_dir = ["/vendor"]\n',
    'etc/containers/containers.conf': '[engine]\nhooks_dir = ["/main"]\n',
    'etc/containers/containers.conf.d/20-b.conf': '[engine]\nhooks_dir = ["/b", "/opt/eh/hooks.d"]\n',
    'etc/containers/containers.conf.d/10-a.conf': '[engine]\nhooks_dir = ["/a"]\n',
    'etc/containers/containers.conf.d/30-c.conf.bak': '[engine]\nhooks_dir = ["/not-read"]\n',
    'etc/containers/containers.conf.d/50-envhook.conf': '[engine]\nhooks_dir = ["/ours-before"]\n',
  });
  t.same(hooksDir(plan), ['/b', '/opt/eh/hooks.d'], 'envhook once, last');
  t.same(hooksDir(planFor(t, { 'etc/containers/containers.conf': '[engine]\nhooks_dir = ["/main"]\n' })), ['/main', '/opt/eh/hooks.d']);
});

t.test('a hooks_dir that is not a list of strings, or a file that is not TOML: refused', async (t) => {
  t.throws(() => planFor(t, { 'etc/containers/containers.conf': '[engine]\nhooks_dir = "/x"\n' }), {
    message: '/etc/containers/containers.conf: engine.hooks_dir is not a list of strings',
  });
  t.throws(() => planFor(t, { 'etc/containers/containers.conf.d/1.conf': '[engine\n' }), {
    message: '/etc/containers/containers.conf.d/1.conf is not valid TOML (line 1, column 8)',
  });
});
