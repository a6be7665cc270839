// Fixtures and programs handed to another UID (a user-namespaced container's mapped root, a
// reader run as nobody). That UID must reach them wherever the repository lives: a checkout
// under /root (mode 0700 on Debian) or under a `mktemp -d` directory is not searchable by
// other users, so its `.tap/fixtures` and `node_modules` are out of their reach. These
// fixtures live under os.tmpdir() instead, and a process run as another UID gets its own
// Node binary and a bundle of the code it runs there.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { buildSync } from 'esbuild';
import type { Test } from 'tap';
import { NODE, REPO } from './bundle.ts';
import { untapped } from './untapped.ts';

/**
 * Why another UID cannot walk down to `dir` (a directory on the way without search permission
 * for others, or `dir` itself), or undefined when it can. Mode bits only: root owns these
 * directories and the other UID is in none of their groups.
 */
export function unreachableReason(dir: string): string | undefined {
  for (let d = fs.realpathSync(dir); ; d = path.dirname(d)) {
    const mode = fs.statSync(d).mode & 0o7777;
    if ((mode & 0o001) === 0) return `${d} (mode ${mode.toString(8).padStart(4, '0')}) is not searchable by other users`;
    if (d === '/') return undefined;
  }
}

/**
 * A fresh directory under os.tmpdir(), mode 0755, that any UID can enter; removed at teardown.
 * Throws, naming the directory in the way, when TMPDIR points below one only root can enter.
 */
export function otherUidDir(t: Test, prefix: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `envhook-${prefix}-`));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.chmodSync(dir, 0o755);
  const why = unreachableReason(dir);
  if (why) throw new Error(`${why}: another UID cannot reach ${dir}; point TMPDIR at a directory every user can enter (such as /tmp)`);
  return dir;
}

/**
 * The Node that runs the tests, in `dir` (a hard link on the same filesystem, a copy
 * otherwise). The npm `node` package's binary loads only the system's libc, libstdc++ and
 * libgcc (no RUNPATH), which every user can read.
 */
function nodeIn(dir: string): string {
  const node = path.join(dir, 'node');
  if (fs.existsSync(node)) return node;
  const real = fs.realpathSync(NODE);
  try {
    fs.linkSync(real, node);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EXDEV') throw e;
    fs.copyFileSync(real, node);
    fs.chmodSync(node, 0o755);
  }
  return node;
}

/** `src/<rel>` and what it imports as one ES module in `dir`, for a process of another UID. */
export function moduleIn(dir: string, rel: string): string {
  const out = path.join(dir, `${path.basename(rel, '.ts')}.mjs`);
  buildSync({ entryPoints: [path.join(REPO, 'src', rel)], bundle: true, platform: 'node', format: 'esm', outfile: out, logLevel: 'error' });
  fs.chmodSync(out, 0o644);
  return out;
}

/**
 * Runs this Node (linked into `dir`) as UID and GID `id` in `dir`, without tap's loader (a file
 * under node_modules) and without any other variable of the runner.
 */
export function nodeAsOther(dir: string, id: number, args: string[], timeoutMs = 10_000): SpawnSyncReturns<string> {
  const env = { PATH: '/usr/sbin:/usr/bin:/sbin:/bin' };
  return spawnSync(...untapped(nodeIn(dir), args), { uid: id, gid: id, cwd: dir, env, encoding: 'utf8', timeout: timeoutMs });
}
