// A pod's copies go when the pod does, a volume's when the kubelet's volume directory does (the
// resident process decides when: nri/worker/pod-watch.ts, watch/watch-daemon.ts, leftovers.ts).
// Removal is by the checked names of layout.ts only, without following a symlink (a link is
// unlinked, never its target), an entry at a time (removeTree: a step each, steps.ts), so that
// the NRI worker removes a pod's copies of thousands of files in slices of its loop.
import fs from 'node:fs';
import path from 'node:path';
import { DATA_LINK } from '../fs/datadir.ts';
import { copiesRoot, copyDir, podCopiesDir, type CopyPlace } from './layout.ts';
import { drain, type Steps } from './steps.ts';

/** Removes every copy of the pod; true when there was one. */
export function* removePodCopiesSteps(runDir: string, podUid: string): Steps<boolean> {
  const dir = podCopiesDir(runDir, podUid);
  if (!fs.lstatSync(dir, { throwIfNoEntry: false })?.isDirectory()) return false;
  yield* removeTree(dir);
  return true;
}

/** removePodCopiesSteps in one go. */
export function removePodCopies(runDir: string, podUid: string): boolean {
  return drain(removePodCopiesSteps(runDir, podUid));
}

/**
 * Removes one volume's copy, and the pod's directory of copies when it was the last; true when
 * there was one. `onlyIf`: only while its `..data` points at that payload (a refused start's
 * own): a copy another container's start has written since is that container's, and stays.
 */
export function* removeCopySteps(place: CopyPlace, onlyIf?: string): Steps<boolean> {
  const dir = copyDir(place);
  if (!fs.lstatSync(dir, { throwIfNoEntry: false })?.isDirectory()) return false;
  if (onlyIf !== undefined && dataOf(dir) !== onlyIf) return false;
  yield* removeTree(dir);
  try {
    fs.rmdirSync(podCopiesDir(place.runDir, place.podUid)); // only when empty
  } catch {
    // another volume's copy is still there
  }
  return true;
}

/** removeCopySteps in one go. */
export function removeCopy(place: CopyPlace, onlyIf?: string): boolean {
  return drain(removeCopySteps(place, onlyIf));
}

/**
 * Removes `p` and, when it is a directory (never a link to one), everything below it, deepest
 * first: a step per entry removed. An entry gone meanwhile (another remover) is no error.
 */
export function* removeTree(p: string): Steps<void> {
  const st = fs.lstatSync(p, { throwIfNoEntry: false });
  if (st === undefined) return;
  if (!st.isDirectory()) {
    fs.rmSync(p, { force: true });
    return yield;
  }
  let names: string[];
  try {
    names = fs.readdirSync(p);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  for (const name of names) yield* removeTree(path.join(p, name));
  fs.rmSync(p, { recursive: true, force: true }); // empty by now, unless an entry was added meanwhile
  yield;
}

/** Pod UIDs that have copies under the run directory (a restarted process takes them over). */
export function podsWithCopies(runDir: string): string[] {
  try {
    return fs.readdirSync(copiesRoot(runDir));
  } catch {
    return [];
  }
}

function dataOf(dir: string): string | undefined {
  try {
    return fs.readlinkSync(path.join(dir, DATA_LINK));
  } catch {
    return undefined;
  }
}
