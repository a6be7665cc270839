// Packages from a Debian suite for tests and benchmarks: sid (containerd 2.x, NRI's and the
// CRI's api.proto) and trixie (containerd 1.7): downloaded with apt-get from a private apt
// directory and unpacked with dpkg-deb into a cache, never installed into the system. The
// repository holds none of their files.
//
//   node scripts/debian-sid.mjs containerd golang-github-containerd-nri-dev   # sid; prints the dirs
//   node scripts/debian-sid.mjs --suite trixie containerd
//
// Cache, one a suite: $ENVHOOK_SID_CACHE or <repo>/.cache/debian-sid for sid,
// $ENVHOOK_TRIXIE_CACHE or <repo>/.cache/debian-trixie for trixie; one directory a package
// (<cache>/<package>/root is the unpacked tree, <cache>/<package>/version its version).
// Concurrent callers each work in a private temp dir and rename the result into place.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const repo = path.resolve(import.meta.dirname, '..');
const MIRROR = process.env.ENVHOOK_SID_MIRROR ?? 'http://deb.debian.org/debian';

/** The suites this script fetches from. */
export const SUITES = ['sid', 'trixie'];

function checkSuite(suite) {
  if (!SUITES.includes(suite)) throw new Error(`debian-sid: unknown suite ${JSON.stringify(suite)} (one of ${SUITES.join(', ')})`);
  return suite;
}

/** The suite's cache: $ENVHOOK_<SUITE>_CACHE or <repo>/.cache/debian-<suite>. */
export function debianCacheDir(suite) {
  return process.env[`ENVHOOK_${checkSuite(suite).toUpperCase()}_CACHE`] || path.join(repo, '.cache', `debian-${suite}`);
}

/** The unpacked root of each named package of the suite (fetched once, then from the cache). */
export function debianPackages(suite, names) {
  const cache = debianCacheDir(suite);
  const missing = names.filter((n) => !fs.existsSync(path.join(cache, n, 'root')));
  if (missing.length > 0) fetchInto(suite, cache, missing);
  return Object.fromEntries(names.map((n) => [n, path.join(cache, n, 'root')]));
}

/** The version of a cached package of the suite, as apt-get downloaded it. */
export function debianVersion(suite, name) {
  return fs.readFileSync(path.join(debianCacheDir(suite), name, 'version'), 'utf8').trim();
}

export const sidCacheDir = () => debianCacheDir('sid');
export const sidPackages = (names) => debianPackages('sid', names);
/** One sid package's unpacked root. */
export const sidPackage = (name) => sidPackages([name])[name];
export const sidVersion = (name) => debianVersion('sid', name);

/** A private apt directory under `work` for the suite, updated: the options every apt-get call takes. */
function privateApt(suite, work) {
  for (const d of ['lists/partial', 'cache/archives/partial', 'etc', 'debs']) fs.mkdirSync(path.join(work, d), { recursive: true });
  fs.writeFileSync(
    path.join(work, 'etc/sources.list'),
    `deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] ${MIRROR} ${checkSuite(suite)} main\n`,
  );
  const opts = [
    '-o',
    `Dir::Etc::sourcelist=${path.join(work, 'etc/sources.list')}`,
    '-o',
    'Dir::Etc::sourceparts=/nonexistent',
    '-o',
    `Dir::State::Lists=${path.join(work, 'lists')}`,
    '-o',
    `Dir::Cache=${path.join(work, 'cache')}`,
    '-o',
    'Debug::NoLocking=1',
    '-o',
    'APT::Sandbox::User=root',
    '-qq',
  ];
  run('apt-get', [...opts, 'update'], work);
  return opts;
}

/**
 * `names` with every package they depend on (as on a system with nothing installed), the ones
 * whose name matches `keep` unpacked together into one tree: <cache>/<tree>/root. For a
 * toolchain and its sources (bench/go-plugin.mjs: Go and NRI's Go packages).
 */
export function sidClosure(tree, names, keep) {
  const cache = sidCacheDir();
  const dest = path.join(cache, tree);
  if (fs.existsSync(path.join(dest, 'root'))) return path.join(dest, 'root');
  fs.mkdirSync(cache, { recursive: true });
  const work = fs.mkdtempSync(path.join(cache, '.tmp-'));
  try {
    const opts = [
      ...privateApt('sid', work),
      '-o',
      'Dir::State::status=/dev/null',
      '-o',
      `Dir::Cache::archives=${path.join(work, 'debs')}`,
    ];
    run('apt-get', [...opts, 'install', '--download-only', '--no-install-recommends', ...names], work);
    const into = path.join(work, 'tree');
    fs.mkdirSync(path.join(into, 'root'), { recursive: true });
    for (const deb of fs.readdirSync(path.join(work, 'debs')).filter((f) => f.endsWith('.deb') && keep.test(f.split('_')[0]))) {
      run('dpkg-deb', ['-x', path.join(work, 'debs', deb), path.join(into, 'root')], work);
    }
    try {
      fs.renameSync(into, dest);
    } catch (err) {
      if (err.code !== 'ENOTEMPTY' && err.code !== 'EEXIST') throw err;
    }
    return path.join(dest, 'root');
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

function fetchInto(suite, cache, names) {
  fs.mkdirSync(cache, { recursive: true });
  const work = fs.mkdtempSync(path.join(cache, '.tmp-'));
  try {
    const opts = privateApt(suite, work);
    run('apt-get', [...opts, 'download', ...names], path.join(work, 'debs'));
    for (const name of names) {
      const deb = fs.readdirSync(path.join(work, 'debs')).find((f) => f.startsWith(`${name}_`) && f.endsWith('.deb'));
      if (!deb) throw new Error(`debian-sid: apt-get download left no .deb for ${name} (${suite})`);
      const dest = path.join(work, 'pkg', name);
      fs.mkdirSync(dest, { recursive: true });
      run('dpkg-deb', ['-x', path.join(work, 'debs', deb), path.join(dest, 'root')], work);
      fs.writeFileSync(path.join(dest, 'version'), decodeURIComponent(deb.split('_')[1]) + '\n');
      try {
        fs.renameSync(dest, path.join(cache, name));
      } catch (err) {
        // Another caller put it there first: theirs is as good as ours.
        if (err.code !== 'ENOTEMPTY' && err.code !== 'EEXIST') throw err;
      }
    }
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

function run(cmd, args, cwd) {
  try {
    execFileSync(cmd, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' });
  } catch (err) {
    const detail = String(err.stderr ?? '')
      .trim()
      .split('\n')
      .slice(-3)
      .join(' | ');
    throw new Error(`debian-sid: ${cmd} ${args.at(-1)} failed (${detail || err.message})`, { cause: err });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = process.argv.slice(2);
  const suite = args[0] === '--suite' ? args.splice(0, 2)[1] : 'sid';
  const dirs = debianPackages(suite, args);
  for (const [name, dir] of Object.entries(dirs)) console.log(`${name} ${debianVersion(suite, name)} ${dir}`);
}
