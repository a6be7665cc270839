// npm run build: standalone ajv validators, then the CLI (esbuild, CommonJS) as a small launcher
// dist/envhook.cjs that enables Node's compile cache and loads the one-file bundle
// dist/envhook-main.cjs, the library bundle dist/index.cjs, type declarations, and the single
// executable dist/envhook (scripts/build-sea.mjs; skip it with ENVHOOK_NO_SEA=1).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';
import { ascii } from './ascii.mjs';
import { renderFront } from './front-tables.ts';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
process.chdir(root);
execFileSync(process.execPath, ['scripts/gen-validators.mjs'], { stdio: 'inherit' });
// The front's option tables and annotation-key patterns, from the TypeScript tables (its lines
// ending `# from NAME`): rewritten in place, so a checkout's front is the one install ships.
const FRONT = 'hooks/envhook-runtime';
const front = fs.readFileSync(FRONT, 'utf8');
const rendered = renderFront(front);
if (rendered !== front) fs.writeFileSync(FRONT, rendered);
const pkg = JSON.parse(fs.readFileSync('package.json', 'utf8'));
const commit = buildCommit();
// Reproducible: the bundles depend on the sources, package.json and the commit only (no time,
// no path, no host name); docs/design.md#reproducible-builds says what of dist/envhook is not.
const mark = `@(#)envhook ${pkg.version} (${commit})`;
const common = {
  bundle: true,
  platform: 'node',
  target: 'node24',
  format: 'cjs',
  legalComments: 'none',
  define: {
    __ENVHOOK_VERSION__: JSON.stringify(pkg.version),
    __ENVHOOK_COMMIT__: JSON.stringify(commit),
    __ENVHOOK_MARK__: JSON.stringify(mark),
  },
  // src/log.ts reads import.meta.url only when run from source (no `require` there).
  logOverride: { 'empty-import-meta': 'silent' },
  logLevel: 'warning',
};
const shebang = { js: '#!/usr/bin/env node' };

// pino and sonic-boom load worker_threads (thread-stream, for transports, and pino's
// isMainThread, read only for an asynchronous destination) and assert at load time; envhook
// writes its log with a synchronous destination and no transport. Loading them (worker
// threads, the stream stack, assert) added to the start-up of every create through the front. The
// bundled copies get each module on first use instead; each replacement must match, or the
// build fails (a new pino or sonic-boom: update this list).
const LAZY_REQUIRES = [
  [
    /pino[\\/]lib[\\/]transport\.js$/,
    [
      [
        "const ThreadStream = require('thread-stream')",
        "function ThreadStream (...args) { return new (require('thread-stream'))(...args) }",
      ],
    ],
  ],
  [
    /pino[\\/]lib[\\/]tools\.js$/,
    [
      [
        "const { isMainThread } = require('worker_threads')",
        "const workerThreads = { get isMainThread () { return require('worker_threads').isMainThread } }",
      ],
      ['if (!opts.sync && isMainThread) {', 'if (!opts.sync && workerThreads.isMainThread) {'],
    ],
  ],
  [/sonic-boom[\\/]index\.js$/, [["const assert = require('assert')", "const assert = (...args) => require('assert')(...args)"]]],
];
const lazyRequires = {
  name: 'pino-lazy-requires',
  setup(b) {
    for (const [filter, edits] of LAZY_REQUIRES) {
      b.onLoad({ filter }, (args) => {
        let text = fs.readFileSync(args.path, 'utf8');
        for (const [from, to] of edits) {
          if (text.split(from).length !== 2)
            throw new Error(`${args.path}: not exactly one "${from}" (pino or sonic-boom changed: update scripts/build.mjs)`);
          text = text.replace(from, to);
        }
        return { contents: text, loader: 'js' };
      });
    }
  },
};

// commander requires node:child_process at load time for executable subcommands, which envhook
// has none of; loading it (and net, stream, ...) adds to every `envhook inject` or hook
// run. Its only use is childProcess.spawn, so the bundled copy gets the module on first use.
const CHILD_PROCESS = "const childProcess = require('node:child_process');";
const lazyChildProcess = {
  name: 'commander-lazy-child-process',
  setup(b) {
    b.onLoad({ filter: /commander[\\/]lib[\\/]command\.js$/ }, (args) => {
      const text = fs.readFileSync(args.path, 'utf8');
      if (!text.includes(CHILD_PROCESS))
        throw new Error(`${args.path}: no "${CHILD_PROCESS}" (commander changed: update scripts/build.mjs)`);
      const lazy = "const childProcess = { spawn: (...args) => require('node:child_process').spawn(...args) };";
      return { contents: text.replace(CHILD_PROCESS, lazy), loader: 'js' };
    });
  },
};
/**
 * What `envhook install` writes besides the executable, built into the CLI bundle (and so into the
 * single executable): an installed envhook installs, upgrades and uninstalls with no checkout
 * beside it (src/install/artifacts.ts).
 */
function installFiles() {
  const read = (f) => fs.readFileSync(path.join('hooks', f), 'utf8');
  return { front: read('envhook-runtime'), precreate: read('envhook-precreate.json'), createRuntime: read('envhook-createruntime.json') };
}
await build({
  ...common,
  entryPoints: ['src/cli/main.ts'],
  outfile: 'dist/envhook-main.cjs',
  banner: shebang,
  plugins: [lazyChildProcess, lazyRequires],
  define: { ...common.define, __ENVHOOK_BUNDLE__: 'true', __ENVHOOK_INSTALL_FILES__: JSON.stringify(installFiles()) },
});
// lint and convert (src/tools.ts) with the yaml package: a bundle of their own, loaded only by
// those commands, so the CLI bundle every container start loads stays as small as before.
await build({ ...common, entryPoints: ['src/tools.ts'], outfile: 'dist/envhook-tools.cjs' });
await build({
  ...common,
  entryPoints: ['src/cli/entry.ts'],
  outfile: 'dist/envhook.cjs',
  banner: shebang,
  external: ['./envhook-main.cjs'],
});
await build({ ...common, entryPoints: ['src/index.ts'], outfile: 'dist/index.cjs' });
for (const f of ['dist/envhook.cjs', 'dist/envhook-main.cjs', 'dist/envhook-tools.cjs', 'dist/index.cjs'])
  fs.writeFileSync(f, ascii(fs.readFileSync(f, 'utf8')));
for (const f of ['dist/envhook.cjs', 'dist/envhook-main.cjs']) fs.chmodSync(f, 0o755);
execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json'], { stdio: 'inherit' });
console.error('built dist/envhook.cjs (+ envhook-main.cjs, envhook-tools.cjs), dist/index.cjs, dist/types/');
// The SEA is part of every build unless ENVHOOK_NO_SEA=1 (it prints how long it took).
if (!process.env.ENVHOOK_NO_SEA) execFileSync(process.execPath, ['scripts/build-sea.mjs'], { stdio: 'inherit' });

/**
 * The commit the build is made from: ENVHOOK_COMMIT (an image build without .git), else git's
 * short hash with `-dirty` when a tracked file differs from it, else 'unknown'.
 */
function buildCommit() {
  // empty: the Dockerfile's build stage without --build-arg REVISION (git, if the context has .git)
  if (process.env.ENVHOOK_COMMIT) {
    if (!/^([0-9a-f]{7,40}(-dirty)?|unknown)$/.test(process.env.ENVHOOK_COMMIT))
      throw new Error(`ENVHOOK_COMMIT=${process.env.ENVHOOK_COMMIT}: expected a commit hash (7 to 40 hex digits) or unknown`);
    return process.env.ENVHOOK_COMMIT;
  }
  const git = (args) => execFileSync('git', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  try {
    const hash = git(['rev-parse', '--short=7', 'HEAD']);
    return git(['status', '--porcelain', '--untracked-files=no']) === '' ? hash : `${hash}-dirty`;
  } catch {
    return 'unknown';
  }
}
