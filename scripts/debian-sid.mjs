// Packages from Debian's sid suite for tests and benchmarks (containerd 2.x, NRI's and the CRI's
// api.proto): downloaded with apt-get from a private apt directory and unpacked with dpkg-deb
// into a cache, never installed into the system. The repository holds none of their files.
//
//   node scripts/debian-sid.mjs containerd golang-github-containerd-nri-dev   # prints the dirs
//
// Cache: $ENVHOOK_SID_CACHE or <repo>/.cache/debian-sid, one directory a package
// (<cache>/<package>/root is the unpacked tree, <cache>/<package>/version its version).
// Concurrent callers each work in a private temp dir and rename the result into place.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const repo = path.resolve(import.meta.dirname, '..');
const MIRROR = process.env.ENVHOOK_SID_MIRROR ?? 'http://deb.debian.org/debian';

export function sidCacheDir() {
  return process.env.ENVHOOK_SID_CACHE || path.join(repo, '.cache', 'debian-sid');
}

/** The unpacked root of each named sid package (fetched once, then from the cache). */
export function sidPackages(names) {
  const cache = sidCacheDir();
  const missing = names.filter((n) => !fs.existsSync(path.join(cache, n, 'root')));
  if (missing.length > 0) fetchInto(cache, missing);
  return Object.fromEntries(names.map((n) => [n, path.join(cache, n, 'root')]));
}

/** One sid package's unpacked root. */
export function sidPackage(name) {
  return sidPackages([name])[name];
}

/** The version of a cached package, as apt-get downloaded it. */
export function sidVersion(name) {
  return fs.readFileSync(path.join(sidCacheDir(), name, 'version'), 'utf8').trim();
}

/** A private apt directory under `work` for sid, updated: the options every apt-get call takes. */
function privateApt(work) {
  for (const d of ['lists/partial', 'cache/archives/partial', 'etc', 'debs']) fs.mkdirSync(path.join(work, d), { recursive: true });
  fs.writeFileSync(path.join(work, 'etc/sources.list'), `deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] ${MIRROR} sid main\n`);
  const opts = [
    '-o', `Dir::Etc::sourcelist=${path.join(work, 'etc/sources.list')}`,
    '-o', 'Dir::Etc::sourceparts=/nonexistent',
    '-o', `Dir::State::Lists=${path.join(work, 'lists')}`,
    '-o', `Dir::Cache=${path.join(work, 'cache')}`,
    '-o', 'Debug::NoLocking=1',
    '-o', 'APT::Sandbox::User=root',
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
    const opts = [...privateApt(work), '-o', 'Dir::State::status=/dev/null', '-o', `Dir::Cache::archives=${path.join(work, 'debs')}`];
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

function fetchInto(cache, names) {
  fs.mkdirSync(cache, { recursive: true });
  const work = fs.mkdtempSync(path.join(cache, '.tmp-'));
  try {
    const opts = privateApt(work);
    run('apt-get', [...opts, 'download', ...names], path.join(work, 'debs'));
    for (const name of names) {
      const deb = fs.readdirSync(path.join(work, 'debs')).find((f) => f.startsWith(`${name}_`) && f.endsWith('.deb'));
      if (!deb) throw new Error(`debian-sid: apt-get download left no .deb for ${name}`);
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
    const detail = String(err.stderr ?? '').trim().split('\n').slice(-3).join(' | ');
    throw new Error(`debian-sid: ${cmd} ${args.at(-1)} failed (${detail || err.message})`, { cause: err });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const dirs = sidPackages(process.argv.slice(2));
  for (const [name, dir] of Object.entries(dirs)) console.log(`${name} ${sidVersion(name)} ${dir}`);
}
