// crioPlan: the createRuntime hooks.d file in the directory CRI-O reads, the crio.conf.d drop-in
// naming the front as the handler's runtime_path (valid TOML whatever the prefix), the
// RuntimeClass; its check runs the named crio (the double of test/helpers/install/crio.ts) on the files
// written under a test root, or is said to be skipped when there is no crio.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { makeLayout } from '../../../src/install/layout.ts';
import { crioDropIn, crioPlan } from '../../../src/install/crio/crio-plan.ts';
import { parseToml } from '../../../src/install/toml.ts';
import { crioDouble } from '../../helpers/install/crio.ts';
import { crioNodeRoot, hostFiles, install, installRoot } from '../../helpers/install/install.ts';

t.test('the drop-in: the handler running the front, valid TOML for an odd prefix', async (t) => {
  const layout = makeLayout('crio', { prefix: '/opt/my "envhook"\\x' });
  t.same(parseToml(crioDropIn(layout), 'drop-in'), {
    crio: {
      runtime: {
        runtimes: { envhook: { runtime_path: '/opt/my "envhook"\\x/envhook-runtime', runtime_type: 'oci', runtime_root: '/run/runc' } },
      },
    },
  });
});

t.test('the files, in order; no crio: the check said to be skipped', async (t) => {
  const saved = process.env.PATH;
  process.env.PATH = '/nonexistent';
  t.teardown(() => void (process.env.PATH = saved));
  const { root } = crioNodeRoot(t, {});
  const layout = makeLayout('crio', { root, prefix: '/opt/eh' });
  const plan = crioPlan(layout, {});
  t.same(
    plan.files.map((f) => [f.file, f.mode.toString(8)]),
    [
      ['/usr/share/containers/oci/hooks.d/envhook-createruntime.json', '644'],
      ['/etc/crio/crio.conf.d/50-envhook.conf', '644'],
      ['/opt/eh/runtimeclass.yaml', '644'],
    ],
  );
  t.same(JSON.parse(plan.files[0]!.content.toString()).stages, ['createRuntime'], 'never a precreate file for CRI-O');
  t.equal(plan.files[1]!.content.toString(), crioDropIn(layout));
  t.same(plan.blocks, []);
  t.equal(plan.verify, undefined);
  t.same(plan.notes, [
    "not checked with CRI-O: no crio under --root on PATH or in /usr/local/sbin, /usr/local/bin, /usr/sbin, /usr/bin, /sbin, /bin (--crio PATH names one); read from its files instead (crio.conf, crio.conf.d), not crio config: no hooks_dir set, CRI-O's default /usr/share/containers/oci/hooks.d",
  ]);
  t.match(plan.next[0], /^restart CRI-O to load the handler: systemctl restart crio /);
  t.equal(plan.next[1], 'kubectl apply -f /opt/eh/runtimeclass.yaml');
  t.equal(
    crioPlan(layout, {}, { hooksDir: '/etc/containers/oci/hooks.d' }).files[0]!.file,
    '/etc/containers/oci/hooks.d/envhook-createruntime.json',
  );
  const tpl = Buffer.from(
    JSON.stringify({ hook: { path: '/x' }, when: { annotations: { '^envhook\\.io/': '.*' } }, stages: ['createRuntime'], extra: 1 }),
  );
  t.equal(JSON.parse(crioPlan(layout, { createRuntime: tpl }).files[0]!.content.toString()).extra, 1, "the source's template");
});

t.test("with crio: the check is CRI-O's reading of the written files", async (t) => {
  const dir = t.testdir({ bin: {} });
  const root = path.join(dir, 'root');
  hostFiles(root, { 'etc/crio/crio.conf': '[crio]\n' });
  const crio = crioDouble(path.join(dir, 'bin'));
  const layout = makeLayout('crio', { root, prefix: '/opt/eh' });
  const plan = crioPlan(layout, {}, { crio: crio.bin });
  t.equal(plan.notes, undefined);
  t.throws(() => plan.verify!(), { message: 'crio config: no runtime handler "envhook"' }, 'nothing written yet');
  for (const f of plan.files) hostFiles(root, { [f.file.slice(1)]: f.content.toString() });
  t.equal(plan.verify!(), 'checked: crio config shows the runtime handler "envhook" with runtime_path /opt/eh/envhook-runtime');
  t.ok(fs.existsSync(path.join(root, 'usr/share/containers/oci/hooks.d/envhook-createruntime.json')));
});

t.test('--oci-runtime crun: the drop-in says crun, its comment and its runtime_root', async (t) => {
  const { root, source } = crioNodeRoot(t, {});
  const r = install({ runtime: 'crio', root, source, extra: ['--oci-runtime', 'crun'], env: { PATH: '/nonexistent' } });
  t.equal(r.status, 0, r.stderr);
  t.equal(
    fs.readFileSync(path.join(root, 'etc/crio/crio.conf.d/50-envhook.conf'), 'utf8'),
    [
      '# Written by envhook install; removed by envhook uninstall.',
      '# The envhook runtime handler: crun behind envhook-runtime (select it with RuntimeClass "envhook").',
      '[crio.runtime.runtimes.envhook]',
      'runtime_path = "/usr/local/lib/envhook/envhook-runtime"',
      'runtime_type = "oci"',
      'runtime_root = "/run/crun"',
      '',
    ].join('\n'),
  );
  t.equal(crioDropIn(makeLayout('crio', {}), '/usr/local/bin/crun').split('\n')[5], 'runtime_root = "/run/crun"', 'a path: its name');
});

t.test('no crio binary: hooks_dir and TOML from crio.conf and crio.conf.d, as the NRI install reads them', async (t) => {
  const NO_CRIO = { ...process.env, PATH: '/nonexistent' };
  const hooksDir = '[crio.runtime]\nhooks_dir = ["/etc/containers/oci/hooks.d", "/usr/share/containers/oci/hooks.d"]\n';
  const { root, source } = installRoot(t, { 'etc/crio/crio.conf': '[crio]\n', 'etc/crio/crio.conf.d/10-hooks.conf': hooksDir });
  const r = install({ runtime: 'crio', root, source, env: NO_CRIO });
  t.equal(r.status, 0, r.stderr);
  t.match(r.stdout, /^create \/etc\/containers\/oci\/hooks\.d\/envhook-createruntime\.json$/m, 'the first entry, as CRI-O uses');
  t.notOk(fs.existsSync(path.join(root, 'usr/share/containers/oci/hooks.d/envhook-createruntime.json')), 'not the default directory');
  t.match(
    r.stdout,
    '\nnote: not checked with CRI-O: no crio under --root on PATH or in /usr/local/sbin, /usr/local/bin, /usr/sbin, /usr/bin, /sbin, /bin (--crio PATH names one); read from its files instead (crio.conf, crio.conf.d), not crio config: hooks_dir /etc/containers/oci/hooks.d, /usr/share/containers/oci/hooks.d from /etc/crio/crio.conf.d/10-hooks.conf: the createRuntime file goes to /etc/containers/oci/hooks.d\n',
  );
  const other = install({ runtime: 'crio', root, source, env: NO_CRIO, extra: ['--hooks-dir', '/opt/hooks'] });
  t.equal(other.status, 1);
  t.equal(
    other.stderr,
    'envhook: --hooks-dir /opt/hooks: hooks_dir in /etc/crio/crio.conf.d/10-hooks.conf (/etc/containers/oci/hooks.d, /usr/share/containers/oci/hooks.d) does not hold it: name one it holds, or leave --hooks-dir out\n',
  );

  const bad = installRoot(t, { 'etc/crio/crio.conf': '[crio\nhooks_dir = 1\n' });
  const shim = install({ runtime: 'crio', root: bad.root, source: bad.source, env: NO_CRIO });
  const nri = install({ runtime: 'crio', root: bad.root, source: bad.source, env: NO_CRIO, extra: ['--mode', 'nri'] });
  for (const [mode, run] of [
    ['shim', shim],
    ['nri', nri],
  ] as const) {
    t.equal(run.status, 1, mode);
    t.equal(run.stderr, 'envhook: /etc/crio/crio.conf is not valid TOML (line 1, column 6)\n', `${mode}: the same line`);
  }
  t.same(fs.readdirSync(bad.root), ['etc'], 'nothing written');
});
