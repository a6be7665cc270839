// Stages strictly one way: no import of src/ runs against the layer order of
// scripts/codebase-stats.mjs (LAYERS), and no two folders import each other, directly or round
// about. Each offending import fails on its own line, so the message says what to change.
import t from 'tap';
import path from 'node:path';
import { analyze, LAYERS, layerOf } from '../../scripts/codebase-stats.mjs';

const root = path.resolve(import.meta.dirname, '../..');

t.test('every source file of src/ has a layer', async (t) => {
  const stats = analyze(root);
  t.ok(stats.files > 100, `src/ read (${stats.files} files, ${stats.imports} relative imports)`);
  for (const f of stats.unassigned) t.fail(`src/${f} is in no layer of scripts/codebase-stats.mjs LAYERS`);
  t.equal(stats.unassigned.length, 0, 'no file without a layer');
});

t.test('no import runs against the layer order', async (t) => {
  const { backArrows } = analyze(root);
  for (const b of backArrows) t.fail(`src/${b.from} (${b.fromLayer}) imports src/${b.to} (${b.toLayer}, a higher layer)`);
  t.equal(backArrows.length, 0, `no back arrow in the order ${LAYERS.map(([name]) => name).join(' → ')}`);
});

t.test('no folder cycle', async (t) => {
  const { folderCycles } = analyze(root);
  for (const c of folderCycles)
    t.fail(`folders ${c.folders.join(', ')} import each other: ${c.imports.map((e) => `${e.from} → ${e.to}`).join('; ')}`);
  t.equal(folderCycles.length, 0, 'no folder cycle');
});

t.test('the check finds a back arrow and a folder cycle where there is one', async (t) => {
  const dir = t.testdir({
    src: {
      'errors.ts': "import { run } from './pipeline.ts';\n",
      'pipeline.ts': "import { x } from './facts/facts.ts';\n",
      facts: { 'facts.ts': "import { y } from '../k8s/pod.ts';\nexport const x = () => 1;\n" },
      k8s: { 'pod.ts': "import type { x } from '../facts/facts.ts';\nexport const y = 1;\n" },
      generated: { 'validators.js': '' },
    },
    test: { facts: { 'facts.test.ts': '' } },
    'README.md': 'four bytes',
  });
  const stats = analyze(dir);
  t.same(
    stats.backArrows.map((b) => `${b.from} -> ${b.to}`),
    ['errors.ts -> pipeline.ts', 'k8s/pod.ts -> facts/facts.ts'],
    'an import of a higher layer, from a file or from a folder',
  );
  t.same(
    stats.folderCycles.map((c) => c.folders),
    [['facts', 'k8s']],
    'facts and k8s import each other',
  );
  t.equal(stats.files, 4, 'generated/ is not a source file');
  t.same([stats.withLogic, stats.mirrored], [1, 1], 'facts.ts has logic and its mirrored test');
  t.equal(stats.readmeBytes, 10);
});

t.test('a file takes the layer of its longest matching path', async (t) => {
  const name = (rel: string) => LAYERS[layerOf(rel)]?.[0];
  t.equal(name('ownership/uidmap.ts'), 'k8s', 'a reader that facts use sits apart from its folder');
  t.equal(name('ownership/prepare.ts'), 'owners');
  t.equal(name('ownership/chown.ts'), 'chown');
  t.equal(layerOf('nowhere/x.ts'), -1);
});
