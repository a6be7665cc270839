// A pod's copies go when the pod does, a volume's when the kubelet's volume directory does (the
// resident process decides when: nri/worker/pod-watch.ts, watch/watch-daemon.ts, leftovers.ts). Removal is by the checked names of layout.ts only, without following
// a symlink (fs.rmSync unlinks links, never their targets).
import fs from 'node:fs';
import { copiesRoot, copyDir, podCopiesDir, type CopyPlace } from './layout.ts';

/** Removes every copy of the pod; true when there was one. */
export function removePodCopies(runDir: string, podUid: string): boolean {
  const dir = podCopiesDir(runDir, podUid);
  if (!fs.lstatSync(dir, { throwIfNoEntry: false })?.isDirectory()) return false;
  fs.rmSync(dir, { recursive: true, force: true });
  return true;
}

/** Removes one volume's copy, and the pod's directory of copies when it was the last; true when there was one. */
export function removeCopy(place: CopyPlace): boolean {
  const dir = copyDir(place);
  if (!fs.lstatSync(dir, { throwIfNoEntry: false })?.isDirectory()) return false;
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
