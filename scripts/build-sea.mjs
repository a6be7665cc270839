// npm run build:sea: dist/envhook, a Node single executable application (SEA) of the CLI bundle
// dist/envhook-main.cjs with a V8 code cache, so no JavaScript is compiled at start-up.
// Node 24 has no `--build-sea`: the blob is made with --experimental-sea-config and injected
// into a copy of the node binary (the `node` devDependency) with postject. Linux: no signature.
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { makeTrainingPod } from './sea-training.mjs';
import { ascii } from './ascii.mjs';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
process.chdir(root);
const started = performance.now();
const node = 'node_modules/node/bin/node';
const out = 'dist/envhook';
const work = 'dist/sea';
fs.mkdirSync(work, { recursive: true });
// The bundle, wrapped as a CommonJS module (its shebang line dropped), and its code cache taken
// after the front's `envhook shim create` of a small pod (scripts/sea-main.cjs says why). Made with the same Node
// and the same V8 flags (SEA_FLAGS) as the executable runs with, else V8 rejects the cache.
// The cache cuts the instructions of inject and `version` (bench/README.md has the figures).
// None: an 8 MiB young generation from the start (`--min-semi-space-size=8`) saved inject a few
// instructions, but the resident NRI plugin runs this executable too and kept more RSS with it
// (bench row 8); inject's wall time measured the same without it (bench/README.md).
const SEA_FLAGS = [];
const source = `${work}/envhook-main.js`;
const cache = `${work}/envhook-main.cache`;
const bundle = fs.readFileSync('dist/envhook-main.cjs', 'utf8').replace(/^#!.*\n/, '');
// ASCII only (scripts/ascii.mjs), so that the executable reads the source as Latin-1 straight
// from its section, with no UTF-8 decoding at each start.
fs.writeFileSync(source, ascii(`(function (exports, require, module, __filename, __dirname) {${bundle}\n})`));
const tools = `${work}/envhook-tools.js`;
fs.writeFileSync(
  tools,
  `(function (exports, require, module, __filename, __dirname) {${fs.readFileSync('dist/envhook-tools.cjs', 'utf8')}\n})`,
);
// ENVHOOK_SEA_CACHE=FILE takes that code cache instead of training one (scripts/reproducible.mjs:
// the cache is the one part of the executable that differs between builds of one commit).
const given = process.env.ENVHOOK_SEA_CACHE;
if (given) fs.copyFileSync(given, cache);
const training = given ? undefined : fs.mkdtempSync(path.join(os.tmpdir(), 'envhook-sea-training-'));
if (training)
  try {
    const { argv, env: trainingEnv } = makeTrainingPod(training);
    const env = { ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('ENVHOOK_'))), ...trainingEnv };
    delete env.NODE_OPTIONS;
    const run = spawnSync(node, [...SEA_FLAGS, 'scripts/sea-train.cjs', source, cache, ...argv], { env, encoding: 'utf8' });
    if (run.status !== 0 || !fs.existsSync(cache))
      throw new Error(`training run of envhook shim create failed (status ${run.status}): ${run.stderr}`);
  } finally {
    fs.rmSync(training, { recursive: true, force: true });
  }
const config = {
  main: 'scripts/sea-main.cjs',
  // lint and convert (dist/envhook-tools.cjs), wrapped the same way; compiled only when run.
  assets: { 'envhook-main.js': source, 'envhook-main.cache': cache, 'envhook-tools.js': tools },
  output: `${work}/sea-prep.blob`,
  disableExperimentalSEAWarning: true,
  // Snapshot: no. It does work once main.ts defers main() to
  // v8.startupSnapshot.setDeserializeMainFunction (and `module` is defined for the builder), but
  // Node warns that child_process (commander) is not verified in snapshots, and it measured no
  // faster than the code cache here (bench/README.md).
  // The main script's own cache: none. It is 1 KB (scripts/sea-main.cjs), and V8's cache of it,
  // made in this process with its random hash seed, differed between two builds of one commit.
  useCodeCache: false,
  useSnapshot: false,
  // The training run above takes the same flags, so V8 accepts its code cache.
  execArgv: SEA_FLAGS,
};
fs.writeFileSync(`${work}/sea-config.json`, JSON.stringify(config, null, 2));
// The blob must be made by the same Node that runs it (the code cache is tied to the V8 build).
execFileSync(node, ['--experimental-sea-config', `${work}/sea-config.json`], { stdio: 'inherit' });
fs.rmSync(out, { force: true });
fs.copyFileSync(node, out);
fs.chmodSync(out, 0o755);
// postject (LIEF) warns about node's many ELF notes ("Can't find string offset for section
// name '.note.100'"): harmless, so its output is shown only when it fails.
const inject = spawnSync(process.execPath, [
  'node_modules/postject/dist/cli.js',
  out,
  'NODE_SEA_BLOB',
  config.output,
  '--sentinel-fuse',
  'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2',
]);
if (inject.status !== 0) {
  process.stderr.write(Buffer.concat([inject.stdout, inject.stderr]));
  throw new Error(`postject failed (status ${inject.status})`);
}
const version = execFileSync(out, ['version']).toString().trim();
console.error(`built ${out} (${version}) in ${((performance.now() - started) / 1000).toFixed(1)} s`);
