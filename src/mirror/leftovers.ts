// What of envhook's owned copies (layout.ts) could keep a secret's bytes after no container can
// read them, and its removal (docs/ownership.md#what-is-removed-when). The resident processes
// (`envhook watch`, the NRI worker: watch/leftover-sweep.ts) look for it at their start and, for
// the first two, at every rescan:
// - a pod's copies whose pod directory is gone: the pod ended while nobody watched it (a plugin
//   that was down, a watcher started after it);
// - a volume's copy whose kubelet volume directory is gone while the pod directory stays: the
//   kubelet tears a terminated pod's volumes down and keeps its directory until the pod object is
//   deleted (completed Jobs, evicted pods);
// - a copy's partial entries: a timestamped directory or a swap link that `..data` does not point
//   at (a process killed while it copied, or before it removed the payload it replaced), and a
//   copy with no `..data` at all (one whose first payload never got there). None is what a
//   container reads. One changed less than SETTLE_MS ago may be a copy another process writes now
//   (a shim's create beside `envhook watch`): it is looked at once more later (removeSettled).
// Nothing is followed through a symbolic link: names are the checked ones of layout.ts, and a
// link is unlinked, never its target. The removals are resumable work (steps.ts, remove.ts): the
// NRI worker's start sweep runs them in slices of its loop, a copy of thousands of files too.
import fs from 'node:fs';
import path from 'node:path';
import { DATA_LINK, isTimestampedName } from '../fs/datadir.ts';
import { ATOMIC_PLUGINS } from '../k8s/volumes.ts';
import { copiesRoot, copyDir, podCopiesDir, type CopyPlace } from './layout.ts';
import { removeCopySteps, removePodCopiesSteps, removeTree } from './remove.ts';
import { drain, type Steps } from './steps.ts';

/** A partial entry is removed once unchanged for this long. */
export const SETTLE_MS = 5_000;

export interface RemovedCopy {
  podUid: string;
  /** Undefined: all of the pod's copies. */
  volume?: string;
  why: 'pod directory is gone' | "the kubelet's volume directory is gone";
}

/** A partial entry of a copy: `name` in the copy's directory, as it was when found. */
export interface PartialEntry {
  place: CopyPlace;
  /** A timestamped directory or swap link; undefined: the whole copy (it has no `..data`). */
  name: string | undefined;
  mtimeMs: number;
}

/** The pods that have copies: real directories by names that can name one (anything else under `volumes/` is not envhook's). */
export function podsWithCopyDirs(runDir: string): string[] {
  return dirsIn(copiesRoot(runDir), (uid) => podCopiesDir(runDir, uid));
}

/** The copied volumes of a pod (real directories by names that can name one). */
export function copiedVolumes(runDir: string, podUid: string): string[] {
  return dirsIn(podCopiesDir(runDir, podUid), (volume) => copyDir({ runDir, podUid, volume }));
}

/** The kubelet still has the volume's directory (under one of the atomic writer's plugins). */
export function kubeletHasVolume(podDir: string, volume: string): boolean {
  return ATOMIC_PLUGINS.some(
    (plugin) => fs.lstatSync(path.join(podDir, 'volumes', plugin, volume), { throwIfNoEntry: false }) !== undefined,
  );
}

/** Removes the copies of pods whose directory is gone, and of volumes whose kubelet directory is gone. */
export function removeGoneCopies(runDir: string, kubeletRoot: string): RemovedCopy[] {
  return podsWithCopyDirs(runDir).flatMap((podUid) => drain(removeGoneCopiesOf(runDir, kubeletRoot, podUid)));
}

/** removeGoneCopies for one pod with copies, a step per entry removed (the NRI worker's start goes pod by pod, in slices). */
export function* removeGoneCopiesOf(runDir: string, kubeletRoot: string, podUid: string): Steps<RemovedCopy[]> {
  const podDir = path.join(kubeletRoot, 'pods', podUid);
  if (!fs.existsSync(podDir)) return (yield* removePodCopiesSteps(runDir, podUid)) ? [{ podUid, why: 'pod directory is gone' }] : [];
  const removed: RemovedCopy[] = [];
  for (const volume of copiedVolumes(runDir, podUid)) {
    if (!kubeletHasVolume(podDir, volume) && (yield* removeCopySteps({ runDir, podUid, volume })))
      removed.push({ podUid, volume, why: "the kubelet's volume directory is gone" });
  }
  return removed;
}

/** Every partial entry of every copy (see the head of this file). */
export function findPartials(runDir: string): PartialEntry[] {
  return podsWithCopyDirs(runDir).flatMap((podUid) => findPartialsOf(runDir, podUid));
}

/** The partial entries of one pod's copies. */
export function findPartialsOf(runDir: string, podUid: string): PartialEntry[] {
  return copiedVolumes(runDir, podUid).flatMap((volume) => partialsOf({ runDir, podUid, volume }));
}

function partialsOf(place: CopyPlace): PartialEntry[] {
  const dir = copyDir(place);
  const st = fs.lstatSync(dir, { throwIfNoEntry: false });
  if (!st?.isDirectory()) return [];
  let current: string | undefined;
  try {
    current = fs.readlinkSync(path.join(dir, DATA_LINK));
  } catch {
    return [{ place, name: undefined, mtimeMs: st.mtimeMs }];
  }
  const out: PartialEntry[] = [];
  for (const name of readNames(dir)) {
    if (name === current || name === DATA_LINK || !(name.startsWith(`${DATA_LINK}_tmp.`) || isTimestampedName(name))) continue;
    const e = fs.lstatSync(path.join(dir, name), { throwIfNoEntry: false });
    if (e !== undefined) out.push({ place, name, mtimeMs: e.mtimeMs });
  }
  return out;
}

type Partials = { removed: PartialEntry[]; young: PartialEntry[] };

/** Removes the partial entries unchanged for `settleMs`, a step per entry removed; returns the younger ones (for removeSettled). */
export function* removePartialsSteps(entries: readonly PartialEntry[], now = Date.now(), settleMs = SETTLE_MS): Steps<Partials> {
  const removed: PartialEntry[] = [];
  const young: PartialEntry[] = [];
  for (const e of entries) {
    if (now - e.mtimeMs < settleMs) young.push(e);
    else if (yield* removePartial(e)) removed.push(e);
  }
  return { removed, young };
}

/** removePartialsSteps in one go. */
export function removePartials(entries: readonly PartialEntry[], now = Date.now(), settleMs = SETTLE_MS): Partials {
  return drain(removePartialsSteps(entries, now, settleMs));
}

/** Removes the entries found before that have not changed since (nor become what `..data` points at). */
export function removeSettled(entries: readonly PartialEntry[]): PartialEntry[] {
  const now = new Map(entries.map((e) => [e.place, partialsOf(e.place)]));
  return entries.filter((e) => drain(settledRemoved(e, now.get(e.place))));
}

/** removeSettled for one entry, a step per entry removed (the NRI worker's second look goes entry by entry, in slices): whether it was removed. */
export function removeSettledEntry(e: PartialEntry): Steps<boolean> {
  return settledRemoved(e, partialsOf(e.place));
}

function* settledRemoved(e: PartialEntry, now: readonly PartialEntry[] | undefined): Steps<boolean> {
  const same = now?.find((p) => p.name === e.name && p.mtimeMs === e.mtimeMs);
  return same !== undefined && (yield* removePartial(same));
}

function* removePartial(e: PartialEntry): Steps<boolean> {
  try {
    if (e.name === undefined) return yield* removeCopySteps(e.place);
    yield* removeTree(path.join(copyDir(e.place), e.name));
    return true;
  } catch {
    return false; // gone meanwhile, or not removable: the next start looks again
  }
}

function readNames(dir: string): string[] {
  try {
    return fs.readdirSync(dir);
  } catch {
    return [];
  }
}

/** The names in `dir` (itself a real directory) that `place` accepts and that are real directories: no symbolic link is followed. */
function dirsIn(dir: string, place: (name: string) => string): string[] {
  if (!fs.lstatSync(dir, { throwIfNoEntry: false })?.isDirectory()) return [];
  return readNames(dir).filter((name) => {
    try {
      return fs.lstatSync(place(name), { throwIfNoEntry: false })?.isDirectory() === true;
    } catch {
      return false; // a name that cannot name a copy
    }
  });
}
