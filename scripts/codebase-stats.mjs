// The shape of src/ from its own imports: each file's layer, the imports that run against the
// layer order (back arrows), folder cycles and file circles, and the figures the structure check
// measures (source files, median lines per file, source files with logic that have a mirrored
// test, the longest functions, README bytes). `node scripts/codebase-stats.mjs` prints them;
// test/scripts/codebase-stats.test.ts fails on any back arrow, folder cycle or file circle, with
// LAYERS below as the one definition of the order.
import fs from 'node:fs';
import { stripTypeScriptTypes } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';

/**
 * The layers, lowest first: a file may import its own layer or a lower one, never a higher one.
 * Each entry names paths under src/ (a folder ends in `/`); a file takes the layer of its
 * longest matching path, so one file can sit apart from its folder.
 *
 * - base: what every stage and entry point uses and that knows nothing of Kubernetes or of
 *   the pipeline's stages: errors, the log, schemas and their validators, settings, lossless
 *   JSON and config.json load/flush (oci/), confined file access and stdin (fs/), the env-file
 *   parser. They take paths, text and JSON, never facts, annotations or changes.
 * - k8s: the Kubernetes vocabulary every stage reads: the runtime's identity annotations, the
 *   envhook.io/ annotations (names, readers), the pod directory and volumes, and the two
 *   KEP-5936 readers that facts and lint use (volumeOwners, user-namespace id mappings).
 * - facts → resolve → owners → plan → apply → chown: the pipeline's data flow. resolve (env
 *   from files) and owners (owners checked, held open; a volume's owned copy read whole and its
 *   place: mirror/) sit below plan because the plan calls them; chown (the one side effect: the
 *   chown, and the owned copy written and swapped in, by the copier in slices where there is one) is
 *   above apply, as it runs after the appliers.
 * - pipeline: run<T>(), the stages in order for any applier.
 * - watch: the owner watcher and its run-directory records (the config.json path records owners
 *   there, the NRI daemon drives the watcher).
 * - bundle: the config.json path end to end: the pipeline on a spec, its flush, the exec sidecar.
 * - tools: lint and convert's manifest reading, checks and rewrites (off the start path).
 * - wire: NRI's and CRI's protocols (framing, ttRPC, gRPC, message tables, codecs).
 * - nri → install → shim: the resident NRI plugin (supervisor and worker); install, which knows
 *   how the plugin is started (nri/process.ts) but nothing of the shim's code (the runtime's
 *   binary is found by oci/runtime-binary.ts, below both); the Node side of the runtime shim.
 *   Each its own layer, so that an import sideways between them shows as a back arrow.
 * - doctor: the node's checks that `envhook status` and `envhook doctor` print, over install's
 *   and the NRI plugin's own readings.
 * - entry: the commands (cli/), the library and the tools bundle.
 */
export const LAYERS = [
  [
    'base',
    [
      'errors.ts',
      'log.ts',
      'schema.ts',
      'listen-address.ts',
      'generated/',
      'settings.ts',
      'version.ts',
      'sh-quote.ts',
      'nearest.ts',
      'bounded-memo.ts',
      'types/',
      'oci/',
      'fs/',
      'envfile/',
    ],
  ],
  ['k8s', ['k8s/', 'ownership/annotation.ts', 'ownership/uidmap.ts']],
  ['facts', ['facts/']],
  ['resolve', ['resolve/']],
  ['owners', ['ownership/', 'mirror/']],
  ['plan', ['plan/']],
  ['apply', ['apply/']],
  [
    'chown',
    [
      'ownership/chown.ts',
      'ownership/copy-reuse.ts',
      'mirror/build.ts',
      'mirror/copy-dir.ts',
      'mirror/copy.ts',
      'mirror/remove.ts',
      'mirror/leftovers.ts',
      'mirror/copier.ts',
    ],
  ],
  ['pipeline', ['pipeline.ts']],
  ['watch', ['watch/']],
  ['bundle', ['bundle/']],
  ['tools', ['manifest/', 'lint/', 'convert/']],
  ['wire', ['nri/wire/']],
  ['nri', ['nri/']],
  ['install', ['install/']],
  ['shim', ['shim/']],
  ['doctor', ['doctor/']],
  ['entry', ['cli/', 'index.ts', 'tools.ts']],
];

const IMPORT = /\b(?:from|import)\s*\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g;

/** The layer index of a path relative to src/ (longest match), or -1 when none names it. */
export function layerOf(rel) {
  let best = -1;
  let bestLength = -1;
  LAYERS.forEach(([, paths], i) => {
    for (const p of paths) {
      const hit = p.endsWith('/') ? rel.startsWith(p) : rel === p;
      if (hit && p.length > bestLength) [best, bestLength] = [i, p.length];
    }
  });
  return best;
}

function walk(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    return e.isDirectory() ? walk(full) : [full];
  });
}

/** The source files of src/ (relative to src/, sorted): TypeScript, not the generated validators. */
export function sourceFiles(root) {
  const src = path.join(root, 'src');
  return walk(src)
    .map((f) => path.relative(src, f).split(path.sep).join('/'))
    .filter((f) => f.endsWith('.ts') && !f.startsWith('generated/'))
    .sort();
}

/** The relative imports of each file: { from, to } paths relative to src/. */
export function importsOf(root, files) {
  const src = path.join(root, 'src');
  const edges = [];
  for (const from of files) {
    const text = fs.readFileSync(path.join(src, from), 'utf8');
    for (const m of text.matchAll(IMPORT)) {
      const to = path.posix.normalize(path.posix.join(path.posix.dirname(from), m[1]));
      edges.push({ from, to });
    }
  }
  return edges;
}

/** The graph node of a file: its folder, or the file itself at the top of src/. */
const folderOf = (rel) => (rel.includes('/') ? path.posix.dirname(rel) : rel);

/** Strongly connected components of more than one folder (Tarjan). */
export function folderCycles(edges) {
  return cyclesOf(edges, folderOf).map(({ nodes, imports }) => ({ folders: nodes, imports }));
}

/** Files that import each other, directly or round about (an import cycle between files). */
export function fileCircles(edges) {
  return cyclesOf(edges, (rel) => rel).map(({ nodes, imports }) => ({ files: nodes, imports }));
}

/** Strongly connected components of more than one node of the import graph (Tarjan), `nodeOf` a file's node. */
function cyclesOf(edges, nodeOf) {
  const next = new Map();
  for (const { from, to } of edges) {
    const [a, b] = [nodeOf(from), nodeOf(to)];
    if (a === b) continue;
    if (!next.has(a)) next.set(a, new Set());
    if (!next.has(b)) next.set(b, new Set());
    next.get(a).add(b);
  }
  let index = 0;
  const idx = new Map();
  const low = new Map();
  const stack = [];
  const on = new Set();
  const cycles = [];
  const visit = (v) => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    on.add(v);
    for (const w of next.get(v)) {
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v), idx.get(w)));
    }
    if (low.get(v) !== idx.get(v)) return;
    const scc = [];
    let w;
    do {
      w = stack.pop();
      on.delete(w);
      scc.push(w);
    } while (w !== v);
    if (scc.length > 1) cycles.push(scc.sort());
  };
  for (const v of [...next.keys()].sort()) if (!idx.has(v)) visit(v);
  // Each cycle as its shortest round, one import a hop, so a failure says what to change.
  return cycles.map((nodes) => ({ nodes, imports: shortestRound(nodes, next, edges, nodeOf) }));
}

/** The shortest round through the nodes of one cycle, as one import per hop. */
function shortestRound(folders, next, edges, nodeOf) {
  let best;
  for (const start of folders) {
    const back = new Map([[start, undefined]]);
    const queue = [start];
    let end;
    while (queue.length > 0 && end === undefined) {
      const v = queue.shift();
      for (const w of [...next.get(v)].sort()) {
        if (!folders.includes(w)) continue;
        if (w === start) {
          end = v;
          break;
        }
        if (!back.has(w)) {
          back.set(w, v);
          queue.push(w);
        }
      }
    }
    const round = [start];
    for (let v = end; v !== start; v = back.get(v)) round.splice(1, 0, v);
    if (best === undefined || round.length < best.length) best = round;
  }
  return best.map((a, i) => {
    const b = best[(i + 1) % best.length];
    return edges.find(({ from, to }) => nodeOf(from) === a && nodeOf(to) === b);
  });
}

/**
 * Logic: a function, arrow function or class once the types are erased (a file of types and
 * constants has none; a function type such as `(x: T) => U` is not logic).
 */
function hasLogic(text) {
  // Node 24 marks stripTypeScriptTypes experimental and says so once on stderr: nothing to act on.
  const emitWarning = process.emitWarning;
  process.emitWarning = () => {};
  try {
    return /\bfunction\b|=>|\bclass\b/.test(stripTypeScriptTypes(text).replace(/\/\/.*$|\/\*[\s\S]*?\*\//gm, ''));
  } finally {
    process.emitWarning = emitWarning;
  }
}

/**
 * Every function of a file with its length in lines (first to last line of its declaration, the
 * body included): declarations, methods, accessors, constructors, function expressions and arrow
 * functions with a block body. A nested function counts in its parent's length as well.
 */
export function functionLengths(rel, text) {
  const file = ts.createSourceFile(rel, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const out = [];
  const visit = (node) => {
    const fn = ts.isFunctionLike(node) && node.body && (!ts.isArrowFunction(node) || ts.isBlock(node.body));
    if (fn) {
      const first = file.getLineAndCharacterOfPosition(node.getStart(file)).line;
      const last = file.getLineAndCharacterOfPosition(node.end).line;
      out.push({ file: rel, name: functionName(node, file), line: first + 1, lines: last - first + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return out;
}

/** A function's name, or that of what it is assigned to (`const f = () => {}`, `{ m: function () {} }`). */
function functionName(node, file) {
  if (node.name) return node.name.getText(file);
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  const p = node.parent;
  if ((ts.isVariableDeclaration(p) || ts.isPropertyAssignment(p) || ts.isPropertyDeclaration(p)) && p.name) return p.name.getText(file);
  if (ts.isCallExpression(p)) return `(argument of ${p.expression.getText(file).slice(0, 40)})`;
  return '(anonymous)';
}

export function analyze(root) {
  const files = sourceFiles(root);
  const text = new Map(files.map((f) => [f, fs.readFileSync(path.join(root, 'src', f), 'utf8')]));
  const edges = importsOf(root, files);
  const unassigned = files.filter((f) => layerOf(f) < 0);
  const backArrows = edges
    .filter(({ from, to }) => layerOf(to) > layerOf(from))
    .map(({ from, to }) => ({ from, to, fromLayer: LAYERS[layerOf(from)]?.[0], toLayer: LAYERS[layerOf(to)][0] }));
  const lines = files.map((f) => text.get(f).split('\n').length - (text.get(f).endsWith('\n') ? 1 : 0)).sort((a, b) => a - b);
  const mid = lines.length >> 1;
  const median = lines.length % 2 ? lines[mid] : (lines[mid - 1] + lines[mid]) / 2;
  const withLogic = files.filter((f) => !f.endsWith('.d.ts') && hasLogic(text.get(f)));
  const untested = withLogic.filter((f) => !fs.existsSync(path.join(root, 'test', f.replace(/\.ts$/, '.test.ts'))));
  const readme = path.join(root, 'README.md');
  const functions = files
    .filter((f) => !f.endsWith('.d.ts'))
    .flatMap((f) => functionLengths(f, text.get(f)))
    .sort((a, b) => b.lines - a.lines || a.file.localeCompare(b.file) || a.line - b.line);
  return {
    files: files.length,
    medianLines: median,
    imports: edges.length,
    unassigned,
    backArrows,
    folderCycles: folderCycles(edges),
    fileCircles: fileCircles(edges),
    functions,
    withLogic: withLogic.length,
    mirrored: withLogic.length - untested.length,
    untested,
    readmeBytes: fs.existsSync(readme) ? fs.statSync(readme).size : 0,
  };
}

const over = (s, n) => s.functions.filter((f) => f.lines > n).length;

function report(s) {
  const out = [
    `source files: ${s.files} (median ${s.medianLines} lines), relative imports: ${s.imports}`,
    `files without a layer: ${s.unassigned.length}`,
    ...s.unassigned.map((f) => `  ${f}`),
    `back arrows: ${s.backArrows.length}`,
    ...s.backArrows.map((b) => `  ${b.from} (${b.fromLayer}) -> ${b.to} (${b.toLayer})`),
    `folder cycles: ${s.folderCycles.length}`,
    ...s.folderCycles.flatMap((c) => [`  ${c.folders.join(' <-> ')}`, ...c.imports.map((e) => `    ${e.from} -> ${e.to}`)]),
    `file circles: ${s.fileCircles.length}`,
    ...s.fileCircles.flatMap((c) => [`  ${c.files.join(' <-> ')}`, ...c.imports.map((e) => `    ${e.from} -> ${e.to}`)]),
    `functions: ${s.functions.length}, over 80 lines: ${over(s, 80)}, over 120 lines: ${over(s, 120)}; the longest:`,
    ...s.functions.slice(0, 10).map((f) => `  ${f.lines} ${f.file}:${f.line} ${f.name}`),
    `mirrored tests: ${s.mirrored} of ${s.withLogic} source files with logic`,
    ...s.untested.map((f) => `  no test/${f.replace(/\.ts$/, '.test.ts')}`),
    `README.md: ${s.readmeBytes} bytes`,
  ];
  return out.join('\n') + '\n';
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  const root = path.resolve(fileURLToPath(import.meta.url), '../..');
  process.stdout.write(report(analyze(root)));
}
