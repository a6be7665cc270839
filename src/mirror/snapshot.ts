// A kubelet volume's current payload measured whole, every entry checked, before anything of a
// copy is written (all or nothing): the directory `..data` points at is walked with the same
// confinement as the owners' walk (fs/confined.ts: no symlink followed, one name looked up at a
// time from an open directory), and only directories and regular files with one link, on the
// volume's own file system, are accepted: a symlink, hard link, FIFO, device, socket or mount
// point fails the whole copy with one line naming it, and so does a name that is not valid UTF-8
// (described, not printed). Each file gets its final owner here (the
// item's, else the volume's default, else the kubelet's), keeps the kubelet's group and mode,
// and is measured (fstat of the file opened confined, never read) against what is left of the
// volume's size limit: the sizes are known before the first write, so the budgets and the free
// space are checked for the whole start first (budget.ts), and the copy reads and writes one
// file at a time (build.ts, file-copy.ts), never a volume held in memory.
import fs from 'node:fs';
import { isUtf8 } from 'node:buffer';
import { EnvhookError } from '../errors.ts';
import { listBounded } from '../fs/bounded-dir.ts';
import { ConfinedError, fdPath, fileKind, openDirAt, withCwdAtSteps } from '../fs/confined.ts';
import type { Steps } from './steps.ts';

/** The UID written to disk for a file (the container's UID translated, ownership/owners.ts). */
export interface CopyOwner {
  hostUid: number;
}

export interface CopyOwners {
  defaultOwner: CopyOwner | undefined;
  /** By normalised relative path (OwnerItem.key). */
  items: ReadonlyMap<string, CopyOwner>;
}

export interface CopyLimits {
  /** Bytes of file content a volume may hold. */
  maxBytes: number;
  /** Files and directories a volume may hold. */
  maxEntries: number;
}

/** An inode of the kubelet's payload (a subPath mount's source) whose path in the copy a copy job looks for. */
export interface WantedEntry {
  ino: number;
  dir: boolean;
}

export const DEFAULT_LIMITS: CopyLimits = { maxBytes: 16 * 1024 * 1024, maxEntries: 4096 };

export interface SnapshotEntry {
  /** Path below the timestamped directory, `/`-separated, parents listed before children. */
  rel: string;
  kind: 'dir' | 'file';
  mode: number;
  uid: number;
  gid: number;
  /** The kubelet's inode (a subPath mount is a bind mount of it: ownership/copy-plan.ts finds it by this). */
  ino?: number;
  /** A file's size in bytes (0 for a directory), as measured: the copy refuses a file that changed since. */
  size: number;
}

export interface Snapshot {
  volume: string;
  /** The timestamped directory itself: its mode, owner and group. */
  root: { mode: number; uid: number; gid: number };
  /** The file system the payload is on (with SnapshotEntry.ino, names an inode). */
  dev: number;
  entries: SnapshotEntry[];
  /** Top-level names (the visible links of the volume). */
  visible: string[];
  files: number;
  bytes: number;
}

const MAX_DEPTH = 256;

interface Walk {
  volume: string;
  dev: number;
  owners: CopyOwners;
  limits: CopyLimits;
  out: Snapshot;
  tick: () => void;
}

/**
 * Reads the open data directory `dataFd` (on device `dev`) of `volume` whole, a step per entry
 * (steps.ts). Throws EnvhookError. `tick` runs before each entry (a deadline's check: it throws
 * to give up).
 */
export function* readSnapshot(
  volume: string,
  dataFd: number,
  owners: CopyOwners,
  limits: CopyLimits = DEFAULT_LIMITS,
  tick: () => void = () => {},
): Steps<Snapshot> {
  const st = fs.fstatSync(dataFd);
  const out: Snapshot = {
    volume,
    root: { mode: st.mode & 0o7777, uid: st.uid, gid: st.gid },
    dev: st.dev,
    entries: [],
    visible: [],
    files: 0,
    bytes: 0,
  };
  const w: Walk = { volume, dev: st.dev, owners, limits, out, tick };
  yield* withCwdAtSteps((enter) => walkDir(w, dataFd, '', 0, enter));
  out.visible = out.entries.filter((e) => !e.rel.includes('/')).map((e) => e.rel);
  return out;
}

function* walkDir(w: Walk, dirFd: number, prefix: string, depth: number, enter: (fd: number) => void): Steps<void> {
  enter(dirFd);
  const names = utf8Names(w, listNames(w, dirFd), prefix).sort();
  for (const name of names) {
    const rel = prefix + name;
    w.tick();
    if (w.out.entries.length >= w.limits.maxEntries) throw tooMany(w);
    const st = fs.lstatSync(fdPath(dirFd, name), { throwIfNoEntry: false });
    if (st === undefined) throw fail(w, `${JSON.stringify(rel)} went away while being copied`);
    if (st.isDirectory()) {
      if (depth + 1 >= MAX_DEPTH) throw fail(w, `directory ${JSON.stringify(rel)} is nested deeper than ${MAX_DEPTH} levels`);
      const sub = openSubdir(w, dirFd, name, rel);
      w.out.entries.push({ rel, kind: 'dir', mode: st.mode & 0o7777, uid: st.uid, gid: st.gid, ino: st.ino, size: 0 });
      try {
        yield* walkDir(w, sub, rel + '/', depth + 1, enter);
      } finally {
        enter(dirFd); // before the close: the descriptor number may be reused
        fs.closeSync(sub);
      }
    } else if (st.isFile()) {
      w.out.entries.push(measureFile(w, st, rel));
    } else {
      throw fail(w, `${JSON.stringify(rel)} is ${fileKind(st)}: refusing to copy it`);
    }
    yield;
  }
}

/**
 * The directory's names as bytes, listed with a bound (fs/bounded-dir.ts): what is left of the
 * volume's entry limit, so a directory of 1e5 entries is refused at the first one past it, not
 * listed whole first.
 */
function listNames(w: Walk, dirFd: number): Buffer[] {
  try {
    return listBounded(fdPath(dirFd, '.'), w.limits.maxEntries - w.out.entries.length).map((d) => d.name);
  } catch (err) {
    if (err instanceof ConfinedError && err.reason.startsWith('has more than')) throw tooMany(w);
    throw err;
  }
}

/**
 * The names as strings. A name that is not valid UTF-8 would be decoded to another name (U+FFFD),
 * one that is not there: the copy is refused, the name described, not printed (its bytes are
 * the pod's), and the directory it is in named.
 */
function utf8Names(w: Walk, raw: readonly Buffer[], prefix: string): string[] {
  for (const name of raw) {
    if (!isUtf8(name))
      throw fail(
        w,
        `a name in ${prefix === '' ? 'the payload' : `directory ${JSON.stringify(prefix.slice(0, -1))}`} is not valid UTF-8: refusing to copy it`,
      );
  }
  return raw.map((name) => name.toString('utf8'));
}

function openSubdir(w: Walk, dirFd: number, name: string, rel: string): number {
  let fd: number;
  try {
    fd = openDirAt(dirFd, name);
  } catch (err) {
    throw confined(w, `directory ${JSON.stringify(rel)}`, err);
  }
  if (fs.fstatSync(fd).dev !== w.dev) {
    fs.closeSync(fd);
    throw fail(w, `directory ${JSON.stringify(rel)} is a mount point (another file system inside the volume)`);
  }
  return fd;
}

/** A regular file by its lstat (never opened here: build.ts opens it, confined, to copy it, and checks it is this inode). */
function measureFile(w: Walk, st: fs.Stats, rel: string): SnapshotEntry {
  const what = `file ${JSON.stringify(rel)}`;
  if (st.nlink !== 1) throw fail(w, `${what} has ${st.nlink} hard links; refusing to copy it`);
  if (st.dev !== w.dev) throw fail(w, `${what} is a mount point (another file system inside the volume)`);
  if (st.size > w.limits.maxBytes - w.out.bytes) throw tooLarge(w);
  w.out.bytes += st.size;
  w.out.files++;
  const owner = w.owners.items.get(rel) ?? w.owners.defaultOwner;
  return { rel, kind: 'file', mode: st.mode & 0o7777, uid: owner?.hostUid ?? st.uid, gid: st.gid, ino: st.ino, size: st.size };
}

function tooMany(w: Walk): EnvhookError {
  return fail(w, `more than ${w.limits.maxEntries} files and directories`);
}

function tooLarge(w: Walk): EnvhookError {
  const mib = Math.round((w.limits.maxBytes / 1048576) * 100) / 100;
  return fail(w, `larger than ${mib} MiB, the limit of envhook's owned copy of a volume`);
}

function fail(w: Walk, what: string): EnvhookError {
  return new EnvhookError(`volume "${w.volume}": ${what}`);
}

function confined(w: Walk, what: string, err: unknown): unknown {
  return err instanceof ConfinedError ? new EnvhookError(`volume "${w.volume}": ${what}: ${err.reason}`, { cause: err }) : err;
}
