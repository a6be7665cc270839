// npm run check:reproducible: builds this checkout twice and compares every byte of dist/ and
// hooks/ (docs/design.md#reproducible-builds). The second build takes the first one's V8 code
// cache (ENVHOOK_SEA_CACHE), the one part that differs between builds by design: so every other
// byte of dist/envhook must be the same. It then trains a cache again, and says whether that
// one differed (it does: V8's random hash seed). One line per file that differs; exit 1 if any.
// About two builds' time (a minute and more on 2 cores): a check, not a test of the suite.
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
process.chdir(root);
const CACHE = 'dist/sea/envhook-main.cache';
const FILES = [
  'dist/envhook',
  'dist/envhook.cjs',
  'dist/envhook-main.cjs',
  'dist/envhook-tools.cjs',
  'dist/index.cjs',
  'hooks/envhook-runtime',
];

function build(env = {}) {
  execFileSync('npm', ['run', '-s', 'build'], { stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, ...env } });
  const sums = {};
  for (const f of [...FILES, CACHE]) sums[f] = crypto.createHash('sha256').update(fs.readFileSync(f)).digest('hex');
  return sums;
}

const first = build();
const kept = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'envhook-repro-')), 'envhook-main.cache');
fs.copyFileSync(CACHE, kept);
const second = build({ ENVHOOK_SEA_CACHE: kept });
const differ = FILES.filter((f) => first[f] !== second[f]);
for (const f of FILES) console.log(`${first[f] === second[f] ? 'same' : 'DIFFERS'} ${f} ${second[f]}`);
const third = build();
console.log(`${first[CACHE] === third[CACHE] ? 'same' : 'differs (V8 hash seed)'} ${CACHE}, trained again`);
fs.rmSync(path.dirname(kept), { recursive: true, force: true });
if (differ.length) {
  console.error(`envhook: ${differ.length} built file(s) differ between two builds of one checkout: ${differ.join(', ')}`);
  process.exit(1);
}
