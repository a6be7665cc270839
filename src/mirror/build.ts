// Writes a snapshot (snapshot.ts) as a new timestamped directory of the volume's copy and swaps
// the copy's `..data` to it, as the kubelet's atomic writer does, with one difference that is
// the point of the copy: every file is created 0600 by root in a directory only root can enter,
// then given its final owner, group and mode, all BEFORE the rename that makes it visible. A
// reader in the container therefore sees the old payload or the new one, each file already
// owned: never a file it may not read. After the swap the visible links are made (missing ones)
// or removed (names the payload lost) and the old directory is retired: kept for RETIRE_MS, so
// that a reader that resolved `..data` to it just before the swap still opens its files (removing
// it at once made such a read fail with ENOENT: 2 in 254,432 reads with both CPUs busy), then
// removed. A failure before the swap removes what it wrote: the copy stays as it was. The new directory takes the name of the
// kubelet's directory it copies when that name is free, so the copy's `..data` says which payload
// it holds: a watcher that starts (after CreateContainer, or a restart) copies only if the
// kubelet has moved on since (watch/copy-watch.ts).
import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import { EnvhookError } from '../errors.ts';
import { capabilityHint } from '../fs/capabilities.ts';
import { fdPath, openDirAt, readLinkAt } from '../fs/confined.ts';
import { DATA_LINK, isTimestampedName } from '../fs/datadir.ts';
import { copyDir, timestampedName, type CopyPlace } from './layout.ts';
import type { Snapshot, SnapshotEntry } from './snapshot.ts';
import { openCopyDir } from './copy-dir.ts';

const { O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW } = fs.constants;
/** A directory of a copy no swap points at, unchanged for this long, is a leftover (a crash, a lost race, a retired payload whose process ended). */
const STALE_MS = 60_000;
/** How long a replaced payload stays readable after the swap (docs/ownership.md, "The guarantee: no window"). */
const RETIRE_MS = 2_000;

/** Writes file entry `e`'s content into `fd` (the new file, open for writing): file-copy.ts from the kubelet's payload. */
export type FillFile = (e: SnapshotEntry, fd: number) => void;

export interface WrittenCopy {
  /** The copy's directory (the mount source). */
  dir: string;
  /** The timestamped directory `..data` now points at. */
  timestamped: string;
  files: number;
  bytes: number;
}

/**
 * Writes `snap` (of the kubelet's directory `source`), each file's content by `fill`, into the
 * copy at `place` (opened and checked by copy-dir.ts) and swaps it in; the payload it replaced is
 * removed `retireMs` later. `onDir`: the timestamped directory's name, before its first entry is
 * written (what a stopped copier thread left: copier.ts removes it).
 */
export function writeCopy(
  place: CopyPlace,
  snap: Snapshot,
  fill: FillFile,
  source?: string,
  retireMs = RETIRE_MS,
  tick: () => void = () => {},
  onDir: (name: string) => void = () => {},
): WrittenCopy {
  const dir = copyDir(place);
  const destFd = openCopyDir(place);
  try {
    const name = writeTimestamped(destFd, snap, { fill, source, tick, onDir });
    const old = swapData(destFd, name);
    const names = fs.readdirSync(fdPath(destFd, '.'));
    syncLinks(destFd, names, snap.visible);
    removeLeftovers(destFd, names, name, old);
    if (old !== undefined && isTimestampedName(old)) retire(destFd, dir, old, retireMs);
    return { dir, timestamped: name, files: snap.files, bytes: snap.bytes };
  } finally {
    fs.closeSync(destFd);
  }
}

interface WriteOptions {
  fill: FillFile;
  source: string | undefined;
  tick: () => void;
  onDir: (name: string) => void;
}

function writeTimestamped(destFd: number, snap: Snapshot, { fill, source, tick, onDir }: WriteOptions): string {
  const taken = (n: string) => fs.lstatSync(fdPath(destFd, n), { throwIfNoEntry: false }) !== undefined;
  let name = source !== undefined && isTimestampedName(source) && !taken(source) ? source : timestampedName();
  while (taken(name)) name = timestampedName();
  onDir(name);
  try {
    fs.mkdirSync(fdPath(destFd, name), { mode: 0o700 });
  } catch (cause) {
    throw failed(snap.volume, cause);
  }
  try {
    const tsFd = openDirAt(destFd, name);
    try {
      writeEntries(tsFd, snap, fill, tick);
      fs.fchownSync(tsFd, snap.root.uid, snap.root.gid);
      fs.fchmodSync(tsFd, snap.root.mode);
    } finally {
      fs.closeSync(tsFd);
    }
  } catch (cause) {
    fs.rmSync(fdPath(destFd, name), { recursive: true, force: true });
    throw cause instanceof EnvhookError ? cause : failed(snap.volume, cause);
  }
  return name;
}

/** Files owned and moded as they are created; directories made 0700 first, finished deepest first. */
function writeEntries(tsFd: number, snap: Snapshot, fill: FillFile, tick: () => void): void {
  for (const e of snap.entries) {
    tick();
    const p = fdPath(tsFd, e.rel);
    if (e.kind === 'dir') {
      fs.mkdirSync(p, { mode: 0o700 });
      continue;
    }
    const fd = fs.openSync(p, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600);
    try {
      fill(e, fd);
      fs.fchownSync(fd, e.uid, e.gid);
      fs.fchmodSync(fd, e.mode); // after the chown, which clears set-id bits
    } finally {
      fs.closeSync(fd);
    }
  }
  for (const e of [...snap.entries].reverse()) {
    if (e.kind !== 'dir') continue;
    const fd = openDirAt(tsFd, e.rel);
    try {
      fs.fchownSync(fd, e.uid, e.gid);
      fs.fchmodSync(fd, e.mode);
    } finally {
      fs.closeSync(fd);
    }
  }
}

/** Points `..data` at `name` by renaming a new link over it; returns the former target. */
function swapData(destFd: number, name: string): string | undefined {
  const old = readLinkAt(destFd, DATA_LINK);
  // A name of its own: a shim's create and the watcher may build the same copy at once.
  const tmp = `${DATA_LINK}_tmp.${crypto.randomInt(2 ** 32 - 1)}`;
  fs.symlinkSync(name, fdPath(destFd, tmp));
  try {
    fs.renameSync(fdPath(destFd, tmp), fdPath(destFd, DATA_LINK));
  } catch (cause) {
    fs.rmSync(fdPath(destFd, tmp), { force: true });
    fs.rmSync(fdPath(destFd, name), { recursive: true, force: true });
    throw cause;
  }
  return old;
}

/** The visible names: `<name> -> ..data/<name>` for each top-level entry, and no other link (`names`: the copy's entries after the swap). */
function syncLinks(destFd: number, names: readonly string[], visible: readonly string[]): void {
  const want = new Set(visible);
  for (const name of names) {
    if (name.startsWith('..') || want.has(name)) continue;
    const st = fs.lstatSync(fdPath(destFd, name), { throwIfNoEntry: false });
    if (st?.isSymbolicLink()) fs.rmSync(fdPath(destFd, name), { force: true });
  }
  for (const name of want) {
    if (!fs.lstatSync(fdPath(destFd, name), { throwIfNoEntry: false })) fs.symlinkSync(`${DATA_LINK}/${name}`, fdPath(destFd, name));
  }
}

/** Removes leftovers: directories and links no swap points at, unchanged for STALE_MS (never the payload just replaced). */
function removeLeftovers(destFd: number, names: readonly string[], current: string, old: string | undefined): void {
  const now = Date.now();
  for (const name of names) {
    if (name === current || name === old || name === DATA_LINK || !name.startsWith('..')) continue;
    const isTmp = name.startsWith(`${DATA_LINK}_tmp.`);
    if (!isTmp && !isTimestampedName(name)) continue;
    const st = fs.lstatSync(fdPath(destFd, name), { throwIfNoEntry: false });
    if (st !== undefined && now - st.mtimeMs > STALE_MS) fs.rmSync(fdPath(destFd, name), { recursive: true, force: true });
  }
}

/**
 * The replaced payload: its mtime set to now (the leftover rule counts from the swap, should this
 * process end first), removed after `ms` by path (root's directories only, copy-dir.ts; fs.rmSync
 * never follows a link). A copy removed meanwhile (the pod ended) leaves nothing to do.
 */
function retire(destFd: number, dir: string, name: string, ms: number): void {
  const now = new Date();
  try {
    fs.utimesSync(fdPath(destFd, name), now, now);
  } catch {
    return; // gone already: another writer's leftover rule
  }
  const timer = setTimeout(() => {
    try {
      fs.rmSync(path.join(dir, name), { recursive: true, force: true });
    } catch {
      // left for the leftover rule of the next swap, or the pod's removal
    }
  }, ms);
  timer.unref();
}

function failed(volume: string, cause: unknown): EnvhookError {
  const code = (cause as NodeJS.ErrnoException).code ?? 'error';
  const hint = code === 'ENOSPC' ? ': the run directory is full' : capabilityHint(cause, ['CHOWN', 'FOWNER']);
  return new EnvhookError(`volume "${volume}": cannot write its owned copy (${code})${hint}`, { cause });
}
