// What install copies, from a source directory laid out in the test: the single executable when
// there is one, else the bundle with a sh wrapper (run here, through a symlink, with a stand-in
// Node that prints its argv), and the hooks.d templates the source ships.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { makeLayout } from '../../src/install/layout.ts';
import { executableTargets, hookTemplates } from '../../src/install/artifacts.ts';
import type { Target } from '../../src/install/targets.ts';

const FRONT = '#!/bin/sh\n# front\n';
const conf: Target = { file: '/opt/eh/envhook-runtime.conf', content: Buffer.from('runtime=/usr/bin/runc\n'), mode: 0o644 };
const bundle = { hooks: { 'envhook-runtime': FRONT }, dist: { 'envhook.cjs': '// launcher\n', 'envhook-main.cjs': '// main\n' } };
const sea = { hooks: { 'envhook-runtime': FRONT }, dist: { envhook: '\0ELF single executable' } };
const summary = (ts: Target[]) => ts.map((x) => [x.file, x.mode.toString(8)]);

t.test('a single executable: envhook, then the front data file, then the front', async (t) => {
  const dir = t.testdir({ sea });
  const l = makeLayout('crio', { root: path.join(dir, 'root'), prefix: '/opt/eh' });
  const ts = executableTargets(l, { source: path.join(dir, 'sea') }, conf);
  t.same(summary(ts), [
    ['/opt/eh/envhook', '755'],
    ['/opt/eh/envhook-runtime.conf', '644'],
    ['/opt/eh/envhook-runtime', '755'],
  ]);
  t.equal(ts[0]!.content.toString(), sea.dist.envhook);
  t.equal(ts[2]!.content.toString(), FRONT);
});

t.test('the bundle: both bundle files, a wrapper that runs the launcher beside it with --node', async (t) => {
  const dir = t.testdir({ bundle, root: { opt: { eh: {} } } });
  const root = path.join(dir, 'root');
  const l = makeLayout('crio', { root, prefix: '/opt/eh' });
  // the stand-in Node, at the path --node names on this test host
  const node = path.join(dir, "my node's bin");
  fs.writeFileSync(node, '#!/bin/sh\nprintf "%s|" "$@"\n', { mode: 0o755 });
  const ts = executableTargets(l, { source: path.join(dir, 'bundle'), node }, conf);
  t.same(summary(ts), [
    ['/opt/eh/envhook-main.cjs', '644'],
    ['/opt/eh/envhook.cjs', '644'],
    ['/opt/eh/envhook', '755'],
    ['/opt/eh/envhook-runtime.conf', '644'],
    ['/opt/eh/envhook-runtime', '755'],
  ]);
  for (const x of ts) fs.writeFileSync(l.real(x.file), x.content, { mode: x.mode });
  fs.symlinkSync(l.real(l.bin), path.join(dir, 'linked'));
  const r = spawnSync(path.join(dir, 'linked'), ['nri', 'a b'], { encoding: 'utf8' });
  t.equal(r.stdout, `${l.real('/opt/eh/envhook.cjs')}|nri|a b|`, 'the launcher beside the real file, the arguments as given');
});

t.test('the bundle and a Node that is not on the host: refused, naming --node', async (t) => {
  const dir = t.testdir({ bundle });
  const source = path.join(dir, 'bundle');
  const l = makeLayout('crio', { root: path.join(dir, 'root'), prefix: '/opt/eh' });
  const running = fs.realpathSync(process.execPath);
  t.throws(() => executableTargets(l, { source }, conf), {
    message: `no single executable (dist/envhook) to install and Node ${running} is not on the host: pass --node PATH`,
  });
  t.throws(() => executableTargets(l, { source, node: 'bin/node' }, conf), {
    message: 'no single executable (dist/envhook) to install and Node bin/node is not on the host: pass --node PATH',
  });
  // an explicit --node under a test root is trusted
  t.equal(executableTargets(l, { source, node: '/opt/node24/bin/node' }, conf).length, 5);
});

t.test('hookTemplates: the templates the source ships, none when it ships none', async (t) => {
  const dir = t.testdir({
    bundle,
    withHooks: { dist: { ...bundle.dist }, hooks: { ...bundle.hooks, 'envhook-precreate.json': '{"p":1}' } },
  });
  t.same(hookTemplates({ source: path.join(dir, 'bundle') }), {});
  const got = hookTemplates({ source: path.join(dir, 'withHooks') });
  t.same(Object.keys(got), ['precreate']);
  t.equal(got.precreate!.toString(), '{"p":1}');
});
