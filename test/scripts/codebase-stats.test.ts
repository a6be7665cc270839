// Stages strictly one way: no import of src/ runs against the layer order of
// scripts/codebase-stats.mjs (LAYERS), no two folders and no two files import each other,
// directly or round about, and no function grows past 120 lines. Each offending import fails on
// its own line, so the message says what to change.
import t from 'tap';
import path from 'node:path';
import { analyze, functionLengths, LAYERS, layerOf } from '../../scripts/codebase-stats.mjs';

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

t.test('no file circle', async (t) => {
  const { fileCircles } = analyze(root);
  for (const c of fileCircles)
    t.fail(`files ${c.files.join(', ')} import each other: ${c.imports.map((e) => `${e.from} → ${e.to}`).join('; ')}`);
  t.equal(fileCircles.length, 0, 'no file circle');
});

t.test('no function of src/ over 120 lines', async (t) => {
  const long = analyze(root).functions.filter((f) => f.lines > 120);
  for (const f of long) t.fail(`src/${f.file} ${f.name} is ${f.lines} lines: split it`);
  t.equal(long.length, 0);
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

t.test('nri, install and the shim have layers of their own: nri below install below the shim', async (t) => {
  const [nri, install, shim] = ['nri/worker/plugin.ts', 'install/front-conf.ts', 'shim/runtime.ts'].map(layerOf);
  t.ok(layerOf('nri/wire/ttrpc.ts') < nri!, 'the protocols below the plugin');
  t.equal(layerOf('nri/supervisor/main.ts'), nri, 'the supervisor and the worker are one layer');
  t.ok(nri! < install! && install! < shim!, 'install may use how the plugin runs (nri/process.ts), nothing may use the shim');
  t.ok(shim! < layerOf('cli/main.ts'), 'the commands on top');
});

t.test('a sideways import between nri, install and the shim, and a file circle, are found', async (t) => {
  const dir = t.testdir({
    src: {
      install: {
        'front-conf.ts': "import { resolveRuntime } from '../shim/runtime.ts';\n",
        plan: {
          'install-plan.ts': "import { removeFile } from './uninstall.ts';\nexport const plan = () => removeFile();\n",
          'uninstall.ts': "import type { Plan } from './install-plan.ts';\nexport function removeFile() {}\n",
        },
      },
      shim: { 'runtime.ts': 'export function resolveRuntime() {}\n' },
      nri: { 'plugin.ts': "import { x } from '../install/front-conf.ts';\n" },
    },
  });
  const stats = analyze(dir);
  t.same(
    stats.backArrows.map((b) => `${b.from} (${b.fromLayer}) -> ${b.to} (${b.toLayer})`),
    ['install/front-conf.ts (install) -> shim/runtime.ts (shim)', 'nri/plugin.ts (nri) -> install/front-conf.ts (install)'],
  );
  t.same(stats.folderCycles, [], 'install/plan and install do not import each other');
  t.same(
    stats.fileCircles.map((c) => [c.files, c.imports.map((e) => `${e.from} -> ${e.to}`)]),
    [
      [
        ['install/plan/install-plan.ts', 'install/plan/uninstall.ts'],
        ['install/plan/install-plan.ts -> install/plan/uninstall.ts', 'install/plan/uninstall.ts -> install/plan/install-plan.ts'],
      ],
    ],
    'a circle over a type-only import counts: the two files still depend on each other',
  );
});

t.test('function lengths: each function from its first to its last line, named by what holds it', async (t) => {
  const text = [
    'export function outer(a: number): number {',
    '  const inner = (b: number) => {',
    '    return b + 1;',
    '  };',
    '  return inner(a);',
    '}',
    'const short = (x: number) => x * 2;',
    'class C {',
    '  constructor() {}',
    '  method(): void {',
    '    [1].forEach(function () {});',
    '  }',
    '}',
  ].join('\n');
  t.same(
    functionLengths('x.ts', text).map((f) => `${f.line} ${f.name} ${f.lines}`),
    ['1 outer 6', '2 inner 3', '9 constructor 1', '10 method 3', '11 (argument of [1].forEach) 1'],
    'an arrow function with an expression body is not counted; a nested one counts on its own too',
  );
});
