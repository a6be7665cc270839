// Chown every regular data file below an open directory, never following a symlink.
// Per file: the directory entry's type from getdents (no stat for symlinks and directories),
// one lstat through /proc/self/fd/<dirfd>/<name> (nothing more when the owner is already
// right: repeated runs are one syscall a file), else pin it (open O_PATH|O_NOFOLLOW, fstat:
// the same inode as the lstat, one link), chown that inode through the pin, close. The pin
// holds the inode, so a swap after the check cannot redirect the chown, and the file is never
// opened for reading; the link count keeps a hard link to a file outside the volume from being
// chowned through it. Group untouched; symlinks, directories and other kinds are never chowned
// (as the kubelet does).
import fs from 'node:fs';
import { EnvhookError } from '../errors.ts';
import { capabilityHint } from '../fs/capabilities.ts';
import { chownPinned, ConfinedError, fdPath, openDirAt, pinFileAt, withCwdAt, type OpenedFile } from '../fs/confined.ts';

export interface Owner {
  uid: number;
  hostUid: number;
}

export interface WalkOptions {
  volume: string;
  /** Device of the data directory: the walk does not cross into another file system. */
  dev: number;
  /** Owner of files not named by an item; undefined leaves them alone. */
  defaultOwner: Owner | undefined;
  /** Item owners by normalised relative path. */
  items: ReadonlyMap<string, Owner>;
  /** Skip top-level names starting with `..` (a plain directory: see fs/datadir.ts). */
  skipReserved: boolean;
  /** Plan only. */
  dryRun: boolean;
  /** Called for every file that gets an owner (the plan). */
  onFile?: (rel: string, owner: Owner) => void;
  /**
   * process.hrtime.bigint() past which the walk gives up with an error (NRI: the runtime drops a
   * plugin that has not answered within its request timeout; an error answered in time fails
   * the create, and the kubelet's retry finds the files already owned).
   */
  deadline?: bigint | undefined;
}

export interface WalkStats {
  files: number;
  changed: number;
}

const MAX_DEPTH = 256;

/** `stats` counts as the walk goes, so a caller keeps what was done before a throw. */
export function chownTree(dirFd: number, opts: WalkOptions, stats: WalkStats = { files: 0, changed: 0 }): WalkStats {
  // Each directory is walked with the working directory set to it (fs/confined.ts: one name
  // looked up per call instead of a /proc/self/fd walk); restored at the end.
  withCwdAt((enter) => walkDir(dirFd, '', 0, opts, stats, enter));
  return stats;
}

function walkDir(dirFd: number, prefix: string, depth: number, opts: WalkOptions, stats: WalkStats, enter: (dirFd: number) => void): void {
  enter(dirFd);
  const entries = fs.readdirSync(fdPath(dirFd, '.'), { withFileTypes: true });
  for (const [i, entry] of entries.entries()) {
    const name = entry.name;
    if (opts.deadline !== undefined && (i & 63) === 63 && process.hrtime.bigint() > opts.deadline) {
      throw fail(
        opts,
        `owners not all set in time (${stats.files} files done): given up before the runtime's request timeout; a retry goes on from there`,
      );
    }
    if (depth === 0 && opts.skipReserved && name.startsWith('..')) continue;
    const rel = prefix + name;
    if (entry.isDirectory()) {
      if (depth + 1 >= MAX_DEPTH) throw fail(opts, `directory ${JSON.stringify(rel)} is nested deeper than ${MAX_DEPTH} levels`);
      const sub = openSubdir(dirFd, name, rel, opts);
      if (sub === undefined) continue;
      try {
        walkDir(sub, rel + '/', depth + 1, opts, stats, enter);
      } finally {
        enter(dirFd); // before the close: the descriptor number may be reused
        fs.closeSync(sub);
      }
    } else if (entry.isFile()) {
      const owner = opts.items.get(rel) ?? opts.defaultOwner;
      if (owner !== undefined) chownFile(dirFd, name, rel, owner, opts, stats);
    }
    // Symlinks (every visible name), FIFOs, sockets, devices: never touched.
  }
}

function openSubdir(dirFd: number, name: string, rel: string, opts: WalkOptions): number | undefined {
  let fd: number;
  try {
    fd = openDirAt(dirFd, name);
  } catch (err) {
    // Gone, or replaced by a symlink since getdents: not followed, not chowned.
    if (err instanceof ConfinedError && (err.code === 'ELOOP' || err.notFound)) return undefined;
    throw wrap(opts, `directory ${JSON.stringify(rel)}`, err);
  }
  if (fs.fstatSync(fd).dev !== opts.dev) {
    fs.closeSync(fd);
    throw fail(opts, `directory ${JSON.stringify(rel)} is a mount point (another file system inside the volume)`);
  }
  return fd;
}

/**
 * One entry `name` of open directory `dirFd` (at `rel` from the walk's root), as the walk would
 * treat it: a regular file gets its owner; 'directory' tells the caller to walk or watch it;
 * anything else (gone, a symlink, a device) is left alone. For the watcher, which owns the files
 * of a new directory one by one as the kubelet creates them.
 */
export function chownEntry(
  dirFd: number,
  name: string,
  rel: string,
  opts: WalkOptions,
  stats: WalkStats,
): 'file' | 'directory' | undefined {
  const st = fs.lstatSync(fdPath(dirFd, name), { throwIfNoEntry: false });
  if (st?.isDirectory()) return 'directory';
  if (!st?.isFile()) return undefined;
  const owner = opts.items.get(rel) ?? opts.defaultOwner;
  if (owner !== undefined) chownFile(dirFd, name, rel, owner, opts, stats, st);
  return 'file';
}

function chownFile(dirFd: number, name: string, rel: string, owner: Owner, opts: WalkOptions, stats: WalkStats, stat?: fs.Stats): void {
  const before = stat ?? fs.lstatSync(fdPath(dirFd, name), { throwIfNoEntry: false });
  if (before === undefined || !before.isFile()) return; // gone or swapped since getdents
  stats.files++;
  opts.onFile?.(rel, owner);
  if (before.uid === owner.hostUid || opts.dryRun) return;
  const file = `file ${JSON.stringify(rel)}`;
  let pinned: OpenedFile;
  try {
    pinned = pinFileAt(dirFd, name, before);
  } catch (err) {
    if (err instanceof ConfinedError && err.notFound) return; // removed since the lstat (a kubelet update)
    throw wrap(opts, file, err);
  }
  try {
    if (pinned.stat.nlink !== 1) throw fail(opts, `${file} has ${pinned.stat.nlink} hard links; refusing to chown it`);
    chownPinned(pinned, owner.hostUid);
    stats.changed++;
  } catch (err) {
    if (err instanceof EnvhookError) throw err;
    throw fail(opts, `cannot chown ${file} (${(err as NodeJS.ErrnoException).code ?? 'error'})${capabilityHint(err, ['CHOWN'])}`, err);
  } finally {
    fs.closeSync(pinned.fd);
  }
}

function fail(opts: WalkOptions, what: string, cause?: unknown): EnvhookError {
  return new EnvhookError(`volume "${opts.volume}": ${what}`, { cause });
}

/** `what`: `file "a/b"` or `directory "a"`; a confined reason is a short fixed phrase. */
function wrap(opts: WalkOptions, what: string, err: unknown): unknown {
  return err instanceof ConfinedError ? fail(opts, `${what}: ${err.reason}`, err) : err;
}
