// One ownership pass over a watched volume, with the start's code and confinement
// (src/ownership/): the directory `..data` points at, opened by fs/datadir.ts and walked by walk.ts
// (no symlink followed, regular data files only, one link, group left alone, fchown on an fd).
// A pending directory — the kubelet's new `..<timestamp>.<random>` before `..data` points at
// it — is opened the same way from the volume's own descriptor, with O_NOFOLLOW, and only when
// its name is exactly what the kubelet's writer makes, so a directory the kubelet would never
// publish is never owned.
import fs from 'node:fs';
import { openDirAt, openRootDir } from '../fs/confined.ts';
import { closeDataDir, openDataDir } from '../fs/datadir.ts';
import { chownTree, type WalkStats } from '../ownership/walk.ts';
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

/** Owns the files `..data` points at (the start's pass). Throws EnvhookError as the start does. */
export function ownCurrent(t: PassTarget): CurrentPass {
  const data = openDataDir(t.volume, t.dir);
  try {
    const stats = walk(t, data.fd, data.dev, data.timestamped === undefined);
    return { ...stats, timestamped: data.timestamped };
  } finally {
    closeDataDir(data);
  }
}

/** Owns the files of pending directory `name`; undefined when it is gone or not a directory. */
export function ownPending(t: PassTarget, name: string): WalkStats | undefined {
  if (!isKubeletTimestamped(name)) return undefined;
  const rootFd = openRootDir(t.dir);
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
  try {
    // The kubelet makes it in the volume: a directory on another file system is not its.
    if (fs.fstatSync(fd).dev !== dev) return undefined;
    return walk(t, fd, dev, false);
  } finally {
    fs.closeSync(fd);
  }
}

function walk(t: PassTarget, fd: number, dev: number, skipReserved: boolean): WalkStats {
  return chownTree(fd, { volume: t.volume, dev, defaultOwner: t.defaultOwner, items: t.items, skipReserved, dryRun: false });
}
