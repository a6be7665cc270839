// One ownership pass over a watched volume, with the start's code and confinement
// (src/ownership/): the directory `..data` points at, opened by fs/datadir.ts and walked by walk.ts
// (no symlink followed, regular data files only, one link, group left alone, fchown on an fd).
// A pending directory — the kubelet's new `..<timestamp>.<random>` before `..data` points at
// it — is opened the same way from the volume's own descriptor, with O_NOFOLLOW, and only when
// its name is exactly what the kubelet's writer makes, so a directory the kubelet would never
// publish is never owned.
import fs from 'node:fs';
import { openDirAt, openDirPathAt, openRootDir } from '../fs/confined.ts';
import { closeDataDir, openDataDir } from '../fs/datadir.ts';
import { chownEntry, chownTree, type WalkOptions, type WalkStats } from '../ownership/walk.ts';
import type { VolumeOwners } from '../ownership/owners.ts';

export interface PassTarget extends VolumeOwners {
  volume: string;
  dir: string;
}

/** `..2006_01_02_15_04_05.<digits>`: the name os.MkdirTemp gives the kubelet's new directory. */
const KUBELET_TIMESTAMPED = /^\.\.\d{4}_\d{2}_\d{2}_\d{2}_\d{2}_\d{2}\.\d{1,20}$/;

export function isKubeletTimestamped(name: string): boolean {
  return KUBELET_TIMESTAMPED.test(name);
}

export interface CurrentPass extends WalkStats {
  /** The timestamped directory `..data` pointed at, or undefined for a plain directory. */
  timestamped: string | undefined;
}

/**
 * Owns the files `..data` points at (the start's pass). Throws EnvhookError as the start does.
 * `stats` (as for the other passes here) counts as the walk goes, a throw included.
 */
export function ownCurrent(t: PassTarget, stats?: WalkStats): CurrentPass {
  const data = openDataDir(t.volume, t.dir);
  try {
    const done = walk(t, data.fd, data.dev, data.timestamped === undefined, stats);
    return { ...done, timestamped: data.timestamped };
  } finally {
    closeDataDir(data);
  }
}

/** A pending directory held open: every access to its files goes through `fd`. */
export interface OpenPending {
  fd: number;
  dev: number;
}

/** Opens pending directory `name`; undefined when it is gone, not a real directory or not the kubelet's. */
export function openPending(t: PassTarget, name: string): OpenPending | undefined {
  if (!isKubeletTimestamped(name)) return undefined;
  let rootFd: number;
  try {
    rootFd = openRootDir(t.dir);
  } catch {
    return undefined; // the volume is gone: its own pass says so
  }
  let fd: number;
  let dev: number;
  try {
    dev = fs.fstatSync(rootFd).dev;
    fd = openDirAt(rootFd, name);
  } catch {
    return undefined; // removed, or not a real directory: nothing the kubelet will publish
  } finally {
    fs.closeSync(rootFd);
  }
  // The kubelet makes it in the volume: a directory on another file system is not its.
  if (fs.fstatSync(fd).dev !== dev) {
    fs.closeSync(fd);
    return undefined;
  }
  return { fd, dev };
}

/** Owns every file of an open pending directory (the same walk as ownCurrent). */
export function ownOpenPending(t: PassTarget, p: OpenPending, stats?: WalkStats): WalkStats {
  return walk(t, p.fd, p.dev, false, stats);
}

/** Owns the files of pending directory `name`; undefined when it is gone or not a directory. */
export function ownPending(t: PassTarget, name: string, stats?: WalkStats): WalkStats | undefined {
  const p = openPending(t, name);
  if (p === undefined) return undefined;
  try {
    return ownOpenPending(t, p, stats);
  } finally {
    fs.closeSync(p.fd);
  }
}

/**
 * Owns entry `rel` (a path below the pending directory, from an inotify event) the moment it is
 * created: a regular file gets its owner at once; 'directory' when it is one (the caller walks
 * and watches it). Each parent is opened from the directory's descriptor, no symlink followed,
 * on the same file system; an entry gone or swapped meanwhile is skipped (undefined). `stats`
 * gets the file counted (and counted changed when its owner was not the one due).
 */
export function ownPendingEntry(
  t: PassTarget,
  p: OpenPending,
  rel: string,
  stats: WalkStats = { files: 0, changed: 0 },
): 'file' | 'directory' | undefined {
  const names = rel.split('/');
  const name = names.pop()!;
  let dirFd = p.fd;
  if (names.length > 0) {
    try {
      dirFd = openDirPathAt(p.fd, names);
    } catch {
      return undefined; // a parent gone or swapped for a symlink: the next walk decides
    }
  }
  try {
    if (dirFd !== p.fd && fs.fstatSync(dirFd).dev !== p.dev) return undefined;
    return chownEntry(dirFd, name, rel, walkOptions(t, p.dev, false), stats);
  } finally {
    if (dirFd !== p.fd) fs.closeSync(dirFd);
  }
}

function walkOptions(t: PassTarget, dev: number, skipReserved: boolean): WalkOptions {
  return { volume: t.volume, dev, defaultOwner: t.defaultOwner, items: t.items, skipReserved, dryRun: false };
}

function walk(t: PassTarget, fd: number, dev: number, skipReserved: boolean, stats?: WalkStats): WalkStats {
  return chownTree(fd, walkOptions(t, dev, skipReserved), stats);
}
