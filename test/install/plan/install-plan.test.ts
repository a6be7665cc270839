// planInstall on a real test root (Podman's and containerd's plans need no runtime binary): the
// changes in install order with the state that records them, a second plan after applying the
// first changing nothing, an admin's file in envhook's place backed up, the bundle of a previous
// install removed once a single executable replaces it, and the flag combinations refused.
import t, { type Test } from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { planInstall, type InstallOptions } from '../../../src/install/plan/install-plan.ts';
import { applyChanges, changed, sha256 } from '../../../src/install/fsops.ts';
import { hostFiles } from '../../helpers/install/install.ts';

const P = '/opt/eh';
const sea = { hooks: { 'envhook-runtime': '#!/bin/sh\n# front\n' }, dist: { envhook: '\0ELF single executable' } };
const bundle = {
  hooks: { 'envhook-runtime': '#!/bin/sh\n# front\n' },
  dist: { 'envhook.cjs': '// launcher\n', 'envhook-main.cjs': '// main\n' },
};

// the runtime the front's data file names is looked up on PATH under the root
const savedPath = process.env.PATH;
process.env.PATH = '/usr/bin';
t.teardown(() => void (process.env.PATH = savedPath));

function setup(t: Test, files: Record<string, string> = {}) {
  const dir = t.testdir({ sea, bundle });
  const root = path.join(dir, 'root');
  hostFiles(root, files);
  fs.mkdirSync(path.join(root, 'usr/bin'), { recursive: true });
  fs.writeFileSync(path.join(root, 'usr/bin/runc'), '#!/bin/sh\n', { mode: 0o755 });
  const opts = (more: Partial<InstallOptions> = {}): InstallOptions => ({
    runtime: 'podman',
    root,
    prefix: P,
    source: path.join(dir, 'sea'),
    ...more,
  });
  return { root, opts, bundle: path.join(dir, 'bundle') };
}
const verbs = (plan: ReturnType<typeof planInstall>) =>
  plan.changes.filter(changed).map((c) => `${c.after === undefined ? 'remove' : c.before === undefined ? 'create' : 'update'} ${c.file}`);

t.test('a first Podman install: every file created in order, recorded with its hash; applied, a second plan changes nothing', async (t) => {
  const { root, opts } = setup(t);
  const plan = planInstall(opts());
  t.same(verbs(plan), [
    `create ${P}/envhook`,
    `create ${P}/envhook-runtime.conf`,
    `create ${P}/envhook-runtime`,
    `create ${P}/hooks.d/envhook-precreate.json`,
    `create ${P}/hooks.d/envhook-createruntime.json`,
    'create /etc/containers/containers.conf.d/50-envhook.conf',
    `create ${P}/state.json`,
  ]);
  t.notOk(
    plan.changes.some((c) => c.backup),
    'nothing of the admin to save',
  );
  t.same(plan.notes, []);
  t.match(plan.changes[1]!.after!.toString(), /^runtime=\/usr\/bin\/runc\n/);
  const state = JSON.parse(plan.changes.at(-1)!.after!.toString());
  const rec = state.runtimes.podman;
  t.equal(rec.config, '/etc/containers/containers.conf.d/50-envhook.conf');
  t.equal(rec.files[`${P}/envhook`], sha256(Buffer.from(sea.dist.envhook)));
  t.equal(Object.keys(rec.files).length, 6);
  t.same(rec.blocks, []);
  t.same(
    rec.dirs,
    ['/etc/containers/containers.conf.d', `${P}/hooks.d`, '/etc/containers', P, '/etc', '/opt'],
    'the directories it creates, deepest first',
  );

  applyChanges(plan.layout, plan.changes);
  t.same(verbs(planInstall(opts())), [], 'installed: nothing to change');
  t.ok(fs.existsSync(path.join(root, 'opt/eh/hooks.d/envhook-precreate.json')));
});

t.test("an admin's file where envhook writes: backed up, with a note", async (t) => {
  const { opts } = setup(t, { 'etc/containers/containers.conf.d/50-envhook.conf': '# the admin\n' });
  const c = planInstall(opts()).changes.find((x) => x.file === '/etc/containers/containers.conf.d/50-envhook.conf')!;
  t.equal(c.backup, true);
  t.equal(c.note, 'this file was not written by envhook');
  t.equal(c.before!.toString(), '# the admin\n');
});

t.test('the bundle installed before, a single executable now: the bundle files removed after the new ones', async (t) => {
  const { opts, bundle: bundleSrc } = setup(t);
  const first = planInstall(opts({ source: bundleSrc, node: '/usr/bin/node24' }));
  t.same(verbs(first).slice(0, 3), [`create ${P}/envhook-main.cjs`, `create ${P}/envhook.cjs`, `create ${P}/envhook`]);
  applyChanges(first.layout, first.changes);
  t.same(verbs(planInstall(opts())), [
    `update ${P}/envhook`,
    `remove ${P}/envhook.cjs`,
    `remove ${P}/envhook-main.cjs`,
    `update ${P}/state.json`,
  ]);
});

t.test('the runtime not found under the root: a note, the name kept', async (t) => {
  const { root, opts } = setup(t);
  fs.rmSync(path.join(root, 'usr/bin/runc'));
  process.env.PATH = '/nowhere';
  t.teardown(() => void (process.env.PATH = '/usr/bin'));
  const plan = planInstall(opts());
  t.same(plan.notes, [
    'runtime "runc" not found on PATH under --root, nor in /usr/local/sbin, /usr/local/bin, /usr/sbin, /usr/bin, /sbin, /bin: the front looks it up on the container runtime\'s PATH',
  ]);
  t.match(plan.changes[1]!.after!.toString(), /^runtime=runc\n/);
});

t.test("another install's block in the file this one would mark: refused", async (t) => {
  const ROOT = '/etc/containerd/config.toml';
  const state = { version: 1, runtimes: { 'containerd-nri': { config: ROOT, files: {}, blocks: [ROOT] } } };
  const { opts } = setup(t, { 'etc/containerd/config.toml': 'version = 2\n', 'opt/eh/state.json': JSON.stringify(state) });
  t.throws(() => planInstall(opts({ runtime: 'containerd' })), {
    message: `${ROOT} carries the envhook block of the containerd-nri install: name another file with --drop-in`,
  });
});

t.test('flags that belong to another mode or runtime: refused in one line', async (t) => {
  const { opts } = setup(t);
  const cases: [Partial<InstallOptions>, string][] = [
    [{ nriLog: '/var/log/x.log' }, '--nri-log is only valid with --mode nri (the pre-installed plugin writes it)'],
    [{ runtime: 'crio', mode: 'nri', nriLog: 'x.log' }, '--nri-log must be an absolute host path'],
    [{ nriRequired: true }, '--nri-required is only valid with --mode nri (it makes the NRI plugin a required one)'],
    [
      { runtime: 'crio', mode: 'nri', enableNri: true },
      "--enable-nri is only valid with --runtime containerd --mode nri (it switches on containerd's NRI)",
    ],
    [
      { runtime: 'containerd', enableNri: true },
      "--enable-nri is only valid with --runtime containerd --mode nri (it switches on containerd's NRI)",
    ],
    [{ mode: 'nri' }, 'Podman has no NRI: install with --mode shim'],
  ];
  for (const [more, message] of cases) t.throws(() => planInstall(opts(more)), { message }, JSON.stringify(more));
});
