// Writes a snapshot (snapshot.ts) as a new timestamped directory of the volume's copy and swaps
// the copy's `..data` to it, as the kubelet's atomic writer does, with one difference that is
// the point of the copy: every file is created 0600 by root in a directory only root can enter,
// then given its final owner, group and mode, all BEFORE the rename that makes it visible. A
// reader in the container therefore sees the old payload or the new one, each file already
// owned: never a file it may not read. After the swap the visible links are made (missing ones)
// or removed (names the payload lost) and the old directory is retired: kept for RETIRE_MS, so
// that a reader that resolved `..data` to it just before the swap still opens its files (removing
// it at once made such a read fail with ENOENT: 2 in 254,432 reads with both CPUs busy), then
// removed. A failure before the swap removes what it wrote: the copy stays as it was. The work is
// a step per entry and per chunk (steps.ts): the NRI worker runs it in slices of its loop. The new directory takes the name of the
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
import { removeTree } from './remove.ts';
import { drain, type Steps } from './steps.ts';

const { O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW } = fs.constants;
/** A directory of a copy no swap points at, unchanged for this long, is a leftover (a crash, a lost race, a retired payload whose process ended). */
const STALE_MS = 60_000;
/** How long a replaced payload stays readable after the swap (docs/ownership.md, "The guarantee: no window"). */
const RETIRE_MS = 2_000;

/** Writes file entry `e`'s content into `fd` (the new file, open for writing), a step per chunk: file-copy.ts from the kubelet's payload. */
export type FillFile = (e: SnapshotEntry, fd: number) => Steps<void>;

/** Removes the replaced payload at `p` after `ms` (default: a timer that removes it in one go; the NRI worker's copier: in slices). */
export type RemoveLater = (p: string, ms: number) => void;

export interface WrittenCopy {
  /** The copy's directory (the mount source). */
  dir: string;
  /** The timestamped directory `..data` now points at. */
  timestamped: string;
  files: number;
  bytes: number;
}

export interface WriteCopyOptions {
  /** The kubelet's directory the snapshot is of (its name, when free, is the new directory's). */
  source?: string | undefined;
  /** How long the replaced payload stays (RETIRE_MS). */
  retireMs?: number | undefined;
  /** Run before each entry written (a deadline's check: it throws to give up). */
  tick?: (() => void) | undefined;
  removeLater?: RemoveLater | undefined;
}

/**
 * Writes `snap`, each file's content by `fill`, into the copy at `place` (opened and checked by
 * copy-dir.ts) and swaps it in, a step per entry and per chunk (steps.ts); the payload it
 * replaced is removed `retireMs` later.
 */
export function* writeCopy(place: CopyPlace, snap: Snapshot, fill: FillFile, opts: WriteCopyOptions = {}): Steps<WrittenCopy> {
  const dir = copyDir(place);
  const destFd = openCopyDir(place);
  try {
    const name = yield* writeTimestamped(destFd, snap, fill, opts);
    const old = swapData(destFd, name);
    const names = fs.readdirSync(fdPath(destFd, '.'));
    yield* syncLinks(destFd, names, snap.visible);
    yield* removeLeftovers(destFd, names, name, old);
    if (old !== undefined && isTimestampedName(old)) retire(destFd, path.join(dir, old), opts.retireMs ?? RETIRE_MS, opts.removeLater);
    return { dir, timestamped: name, files: snap.files, bytes: snap.bytes };
  } finally {
    fs.closeSync(destFd);
  }
}

function* writeTimestamped(destFd: number, snap: Snapshot, fill: FillFile, { source, tick = () => {} }: WriteCopyOptions): Steps<string> {
  const taken = (n: string) => fs.lstatSync(fdPath(destFd, n), { throwIfNoEntry: false }) !== undefined;
  let name = source !== undefined && isTimestampedName(source) && !taken(source) ? source : timestampedName();
  while (taken(name)) name = timestampedName();
  try {
    fs.mkdirSync(fdPath(destFd, name), { mode: 0o700 });
  } catch (cause) {
    throw failed(snap.volume, cause);
  }
  try {
    const tsFd = openDirAt(destFd, name);
    try {
      yield* writeEntries(tsFd, snap, fill, tick);
      fs.fchownSync(tsFd, snap.root.uid, snap.root.gid);
      fs.fchmodSync(tsFd, snap.root.mode);
    } finally {
      fs.closeSync(tsFd);
    }
  } catch (cause) {
    yield* removeTree(fdPath(destFd, name));
    throw cause instanceof EnvhookError ? cause : failed(snap.volume, cause);
  }
  return name;
}

/** Files owned and moded as they are created; directories made 0700 first, finished deepest first. */
function* writeEntries(tsFd: number, snap: Snapshot, fill: FillFile, tick: () => void): Steps<void> {
  for (const e of snap.entries) {
    tick();
    const p = fdPath(tsFd, e.rel);
    if (e.kind === 'dir') {
      fs.mkdirSync(p, { mode: 0o700 });
      yield;
      continue;
    }
    const fd = fs.openSync(p, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600);
    try {
      yield* fill(e, fd);
      fs.fchownSync(fd, e.uid, e.gid);
      fs.fchmodSync(fd, e.mode); // after the chown, which clears set-id bits
    } finally {
      fs.closeSync(fd);
    }
    yield;
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
    yield;
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
function* syncLinks(destFd: number, names: readonly string[], visible: readonly string[]): Steps<void> {
  const want = new Set(visible);
  for (const name of names) {
    if (name.startsWith('..') || want.has(name)) continue;
    const st = fs.lstatSync(fdPath(destFd, name), { throwIfNoEntry: false });
    if (st?.isSymbolicLink()) fs.rmSync(fdPath(destFd, name), { force: true });
    yield;
  }
  for (const name of want) {
    if (!fs.lstatSync(fdPath(destFd, name), { throwIfNoEntry: false })) fs.symlinkSync(`${DATA_LINK}/${name}`, fdPath(destFd, name));
    yield;
  }
}

/** Removes leftovers: directories and links no swap points at, unchanged for STALE_MS (never the payload just replaced). */
function* removeLeftovers(destFd: number, names: readonly string[], current: string, old: string | undefined): Steps<void> {
  const now = Date.now();
  for (const name of names) {
    if (name === current || name === old || name === DATA_LINK || !name.startsWith('..')) continue;
    const isTmp = name.startsWith(`${DATA_LINK}_tmp.`);
    if (!isTmp && !isTimestampedName(name)) continue;
    const st = fs.lstatSync(fdPath(destFd, name), { throwIfNoEntry: false });
    if (st !== undefined && now - st.mtimeMs > STALE_MS) yield* removeTree(fdPath(destFd, name));
  }
}

/**
 * The replaced payload: its mtime set to now (the leftover rule counts from the swap, should this
 * process end first), removed after `ms` by path (root's directories only, copy-dir.ts; no link
 * followed). A copy removed meanwhile (the pod ended) leaves nothing to do.
 */
function retire(destFd: number, p: string, ms: number, removeLater: RemoveLater = removeAfter): void {
  const now = new Date();
  try {
    fs.utimesSync(fdPath(destFd, path.basename(p)), now, now);
  } catch {
    return; // gone already: another writer's leftover rule
  }
  removeLater(p, ms);
}

/** The default RemoveLater: a timer (not holding the process) that removes `p` in one go. */
function removeAfter(p: string, ms: number): void {
  const timer = setTimeout(() => {
    try {
      drain(removeTree(p));
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
