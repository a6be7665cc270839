// The resident processes' removal of leftover owned copies (mirror/leftovers.ts), shared by
// `envhook watch` (watch-daemon.ts: at its start and every rescan) and the NRI worker
// (nri/worker/pod-watch.ts: at its start, after the records are read back): copies of pods and of
// volumes the kubelet has removed, and, at the start only, the partial entries a process killed
// while it copied left behind, removed at once when unchanged for SETTLE_MS, else once more that
// long after the start. Each removal is one log line with the pod UID, the volume and why: names
// and counts only. The NRI worker's start sweep goes pod by pod, and each removal entry by entry,
// in slices (mirror/steps.ts): it runs on the loop that answers the runtime, and its work grows
// with the node's pods and their copies' files.
import { describeError } from '../errors.ts';
import type { Logger } from '../log.ts';
import {
  findPartials,
  findPartialsOf,
  podsWithCopyDirs,
  removeGoneCopies,
  removeGoneCopiesOf,
  removePartials,
  removePartialsSteps,
  removeSettled,
  removeSettledEntry,
  SETTLE_MS,
  type PartialEntry,
  type RemovedCopy,
} from '../mirror/leftovers.ts';
import { newSlice, runInSlices, type Steps } from '../mirror/steps.ts';

export interface SweepPlace {
  runDir: string;
  kubeletRoot: string;
  log: Logger;
  /** `nri: ` in the NRI worker's lines. */
  prefix?: string;
}

/** Runs a pod's sweep (resumable work): the NRI worker's copier, a job in turn with its other jobs; default: in slices of this loop. */
export type RunSteps = (steps: () => Steps<void>, runDir: string) => Promise<void>;

/** Removes the copies whose pod directory or kubelet volume directory is gone. */
export function sweepGoneCopies(place: SweepPlace): void {
  try {
    logGone(place, removeGoneCopies(place.runDir, place.kubeletRoot));
  } catch (err) {
    place.log.warn({ err }, `${place.prefix ?? ''}leftover owned copies not removed: ${describeError(err)}`);
  }
}

function logGone({ log, prefix = '' }: SweepPlace, removed: readonly RemovedCopy[]): void {
  for (const r of removed) {
    if (r.volume === undefined) log.info({ podUid: r.podUid, why: r.why }, `${prefix}pod's owned copies removed`);
    else log.info({ podUid: r.podUid, volume: r.volume, why: r.why }, `${prefix}owned copy removed`);
  }
}

/**
 * The start's sweep: gone copies, then partial entries (those changed in the last SETTLE_MS
 * looked at again SETTLE_MS later, by an unref'd timer). close() cancels the second look.
 */
export function sweepAtStart(place: SweepPlace, settleMs = SETTLE_MS): { close(): void } {
  sweepGoneCopies(place);
  let young: PartialEntry[] = [];
  try {
    const r = removePartials(findPartials(place.runDir), Date.now(), settleMs);
    logPartials(place, r.removed);
    young = r.young;
  } catch (err) {
    place.log.warn({ err }, `${place.prefix ?? ''}partial owned copies not removed: ${describeError(err)}`);
  }
  return lookAgain(place, young, settleMs);
}

/** The second look at young partial entries, settleMs later. */
function lookAgain(place: SweepPlace, young: readonly PartialEntry[], settleMs: number): { close(): void } {
  if (young.length === 0) return { close() {} };
  const timer = setTimeout(() => logPartials(place, removeSettled(young)), settleMs);
  timer.unref();
  return { close: () => clearTimeout(timer) };
}

/**
 * sweepAtStart pod by pod, in slices of the loop (the NRI worker), the second look entry by entry:
 * `done` resolves once every pod with copies was looked at (or close() was called); close() also
 * cancels the second look.
 */
export function sweepAtStartInSlices(place: SweepPlace, settleMs = SETTLE_MS, run?: RunSteps): { close(): void; done: Promise<void> } {
  const slice = newSlice(); // the default: one slice across the pods' works
  const runSteps: RunSteps = run ?? ((steps) => runInSlices(steps(), undefined, slice));
  let closed = false;
  let again: { close(): void } | undefined;
  const young: PartialEntry[] = [];
  // close() is seen between pods and between entries: the one under way is finished.
  const quietly = (steps: () => Steps<void>) => runSteps(steps, place.runDir).catch(() => {});
  const secondLook = async (): Promise<void> => {
    // settleMs later, entry by entry: after a worker's kill most copies hold a payload a swap
    // replaced a moment before (one call over them all held the loop 1.2 s at 250 pods).
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, settleMs);
      timer.unref();
      again = { close: () => (clearTimeout(timer), resolve()) };
    });
    if (closed) return;
    const removed: PartialEntry[] = [];
    await quietly(function* () {
      for (const e of young) {
        if (!closed && (yield* removeSettledEntry(e))) removed.push(e);
        yield; // a step per entry looked at, removed or not
      }
    });
    logPartials(place, removed);
  };
  const done = (async () => {
    let pods: string[] = [];
    try {
      pods = podsWithCopyDirs(place.runDir);
    } catch (err) {
      place.log.warn({ err }, `${place.prefix ?? ''}leftover owned copies not removed: ${describeError(err)}`);
    }
    // A job a pod: other jobs (a CreateContainer's copies, a pod's removal) run in turn between them.
    for (const podUid of pods) if (!closed) await quietly(() => onePod(place, podUid, settleMs, young));
    if (!closed && young.length > 0) void secondLook();
  })();
  return {
    close() {
      closed = true;
      again?.close();
    },
    done,
  };
}

/** The start sweep of one pod's copies, a step per entry removed; its young partial entries added to `young`. */
function* onePod(place: SweepPlace, podUid: string, settleMs: number, young: PartialEntry[]): Steps<void> {
  try {
    logGone(place, yield* removeGoneCopiesOf(place.runDir, place.kubeletRoot, podUid));
    const r = yield* removePartialsSteps(findPartialsOf(place.runDir, podUid), Date.now(), settleMs);
    logPartials(place, r.removed);
    young.push(...r.young);
  } catch (err) {
    place.log.warn({ err, podUid }, `${place.prefix ?? ''}leftover owned copies not removed: ${describeError(err)}`);
  }
}

/** One line a copy: how many partial entries went (the whole copy when it had no `..data`). */
function logPartials({ log, prefix = '' }: SweepPlace, removed: readonly PartialEntry[]): void {
  const byCopy = new Map<string, { podUid: string; volume: string; entries: number; whole: boolean }>();
  for (const e of removed) {
    const key = `${e.place.podUid}/${e.place.volume}`;
    const c = byCopy.get(key) ?? { podUid: e.place.podUid, volume: e.place.volume, entries: 0, whole: false };
    c.entries++;
    if (e.name === undefined) c.whole = true;
    byCopy.set(key, c);
  }
  for (const c of byCopy.values()) {
    const why = c.whole ? 'a copy that never got its first payload' : 'left by a copy that did not finish';
    log.info({ podUid: c.podUid, volume: c.volume, entries: c.entries, why }, `${prefix}partial owned copy removed`);
  }
}
