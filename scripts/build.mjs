// npm run build: standalone ajv validators, then one CommonJS bundle for the CLI and one for
// the library (esbuild), then type declarations for the library.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
process.chdir(root);
execFileSync(process.execPath, ['scripts/gen-validators.mjs'], { stdio: 'inherit' });
const pkg = JSON.parse(fs.readFileSync('package.json', 'utf8'));
const common = {
  bundle: true,
  platform: 'node',
  target: 'node24',
  format: 'cjs',
  legalComments: 'none',
  define: { __ENVHOOK_VERSION__: JSON.stringify(pkg.version) },
  logLevel: 'warning',
};
await build({ ...common, entryPoints: ['src/cli/main.ts'], outfile: 'dist/envhook.cjs', banner: { js: '#!/usr/bin/env node' } });
await build({ ...common, entryPoints: ['src/index.ts'], outfile: 'dist/index.cjs' });
fs.chmodSync('dist/envhook.cjs', 0o755);
execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json'], { stdio: 'inherit' });
console.error('built dist/envhook.cjs, dist/index.cjs, dist/types/');
