// npm run build:sea: dist/envhook, a Node single executable application (SEA) of the CLI bundle
// dist/envhook-main.cjs with a V8 code cache, so no JavaScript is compiled at start-up.
// Node 24 has no `--build-sea`: the blob is made with --experimental-sea-config and injected
// into a copy of the node binary (the `node` devDependency) with postject. Linux: no signature.
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
process.chdir(root);
const started = performance.now();
const node = 'node_modules/node/bin/node';
const out = 'dist/envhook';
const work = 'dist/sea';
fs.mkdirSync(work, { recursive: true });
const config = {
  main: 'dist/envhook-main.cjs',
  output: `${work}/sea-prep.blob`,
  disableExperimentalSEAWarning: true,
  // Code cache: yes. Snapshot: no. It does work once main.ts defers main() to
  // v8.startupSnapshot.setDeserializeMainFunction (and `module` is defined for the builder), but
  // Node warns that child_process (commander) is not verified in snapshots, and it measured no
  // faster than the code cache here (bench/README.md).
  useCodeCache: true,
  useSnapshot: false,
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
  'node_modules/postject/dist/cli.js', out, 'NODE_SEA_BLOB', config.output,
  '--sentinel-fuse', 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2',
]);
if (inject.status !== 0) {
  process.stderr.write(Buffer.concat([inject.stdout, inject.stderr]));
  throw new Error(`postject failed (status ${inject.status})`);
}
const version = execFileSync(out, ['version']).toString().trim();
console.error(`built ${out} (${version}) in ${((performance.now() - started) / 1000).toFixed(1)} s`);
