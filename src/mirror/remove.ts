// A pod's copies go when the pod does, a volume's when the kubelet's volume directory does (the
// resident process decides when: nri/worker/pod-watch.ts, watch/watch-daemon.ts, leftovers.ts). Removal is by the checked names of layout.ts only, without following
// a symlink (fs.rmSync unlinks links, never their targets).
import fs from 'node:fs';
import path from 'node:path';
import { DATA_LINK, isTimestampedName } from '../fs/datadir.ts';
import { copiesRoot, copyDir, podCopiesDir, type CopyPlace } from './layout.ts';

/** Removes every copy of the pod; true when there was one. */
export function removePodCopies(runDir: string, podUid: string): boolean {
  const dir = podCopiesDir(runDir, podUid);
  if (!fs.lstatSync(dir, { throwIfNoEntry: false })?.isDirectory()) return false;
  fs.rmSync(dir, { recursive: true, force: true });
  return true;
}

/**
 * Removes one volume's copy, and the pod's directory of copies when it was the last; true when
 * there was one. `onlyIf`: only while its `..data` points at that payload (a refused start's
 * own): a copy another container's start has written since is that container's, and stays.
 */
export function removeCopy(place: CopyPlace, onlyIf?: string): boolean {
  const dir = copyDir(place);
  if (!fs.lstatSync(dir, { throwIfNoEntry: false })?.isDirectory()) return false;
  if (onlyIf !== undefined && dataOf(dir) !== onlyIf) return false;
  fs.rmSync(dir, { recursive: true, force: true });
  try {
    fs.rmdirSync(podCopiesDir(place.runDir, place.podUid)); // only when empty
  } catch {
    // another volume's copy is still there
  }
  return true;
}

/** Pod UIDs that have copies under the run directory (a restarted process takes them over). */
export function podsWithCopies(runDir: string): string[] {
  try {
    return fs.readdirSync(copiesRoot(runDir));
  } catch {
    return [];
  }
}

/**
 * What a copier thread stopped in the middle of a job left in the copies it was writing: a
 * payload directory no `..data` points at (and a link of a swap under way) is removed, and a copy
 * with no `..data` at all (made by that job) goes whole. A payload it had just replaced goes too
 * (its retirement was the stopped thread's timer).
 */
export function cleanUpCopies(places: readonly CopyPlace[]): undefined {
  for (const place of places) {
    const dir = copyDir(place);
    if (!fs.lstatSync(dir, { throwIfNoEntry: false })?.isDirectory()) continue;
    const current = dataOf(dir);
    if (current === undefined) {
      removeCopy(place);
      continue;
    }
    for (const name of fs.readdirSync(dir)) {
      if (name === current || !(isTimestampedName(name) || name.startsWith(`${DATA_LINK}_tmp.`))) continue;
      fs.rmSync(path.join(dir, name), { recursive: true, force: true });
    }
  }
  return undefined;
}

function dataOf(dir: string): string | undefined {
  try {
    return fs.readlinkSync(path.join(dir, DATA_LINK));
  } catch {
    return undefined;
  }
}
