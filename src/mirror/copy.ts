// One owned copy as a job (docs/design-copies.md#owned-copies-in-slices): the kubelet's current
// payload (what its `..data` points at) measured and checked (snapshot.ts), the budgets and the
// run directory's free space checked (budget.ts), then written a file at a time and swapped in
// (build.ts, file-copy.ts). A container's start is one job of all its volumes (runStartJob):
// measured and checked together before the first write, made all or none. A job is resumable
// work (steps.ts): the NRI worker runs it in slices of its loop (copier.ts), a process with
// nothing else to answer (the shim's create) in one go, so both are bounded alike: by the
// volume's limits, and by the job's deadline, checked before every entry read and every entry
// written (past it the job gives up with one line naming the volume; what it wrote is removed,
// the copy stays as it was). A data directory the caller holds open is named by its descriptor.
import fs from 'node:fs';
import path from 'node:path';
import { EnvhookError } from '../errors.ts';
import { closeDataDir, DATA_LINK, openDataDir } from '../fs/datadir.ts';
import { copyDir, type CopyPlace } from './layout.ts';
import { removeCopySteps } from './remove.ts';
import { writeCopy, type RemoveLater, type WrittenCopy } from './build.ts';
import { checkBudgets, DEFAULT_BUDGETS, type CopyBudgets } from './budget.ts';
import { copyBuffer, copyFileContent, releaseBuffer } from './file-copy.ts';
import { readSnapshot, type CopyLimits, type CopyOwners, DEFAULT_LIMITS, type Snapshot, type WantedEntry } from './snapshot.ts';
import { drain, type Steps } from './steps.ts';
import { measureCopiesSteps } from './usage.ts';

export interface CopiedVolume extends WrittenCopy {
  /** The kubelet's timestamped directory that was copied. */
  source: string;
}

export interface CopyJob {
  place: CopyPlace;
  /** The kubelet's volume directory: its current `..data` is copied (a rewrite, a catch-up). */
  kubeletDir?: string | undefined;
  /** Or the data directory the caller holds open (the plan's, at a container's start), and its `..data` target. */
  data?: { fd: number; timestamped: string } | undefined;
  owners: CopyOwners;
  limits?: CopyLimits | undefined;
  /** process.hrtime.bigint() past which the job gives up (the runtime's request deadline). */
  deadline?: bigint | undefined;
  want?: readonly WantedEntry[] | undefined;
  /** The budgets checked before the write (budget.ts); undefined: the defaults. */
  budgets?: CopyBudgets | undefined;
}

/** A container's start: every volume it copies, measured and checked together before the first write, made all or none. */
export interface StartJob {
  jobs: CopyJob[];
  budgets?: CopyBudgets | undefined;
  deadline?: bigint | undefined;
}

/** What runs a job gives it: who removes a replaced payload later (build.ts RemoveLater; default: a timer, in one go). */
export interface JobEnv {
  removeLater?: RemoveLater | undefined;
}

export interface CopyResult extends CopiedVolume {
  /** For each of the job's `want`, its path below the payload, or undefined when the payload has no such entry. */
  found: (string | undefined)[];
  /** The files that got an owner of the job's (the item's or the default), by path below the payload. */
  owned: string[];
  /** The copy's directory was made by this job (what a refused start removes: one there before is other containers' too). */
  created: boolean;
}

/** The job (a rewrite, a catch-up), a step at a time. Throws EnvhookError (a refusal, late, over a budget, or an unusable volume). */
export function* copyJobSteps(job: CopyJob, env: JobEnv = {}): Steps<CopyResult> {
  return yield* withData(job, function* (dataFd, source) {
    const created = !exists(copyDir(job.place));
    const tick = deadlineTick(job.place.volume, job.deadline);
    try {
      const snap = yield* measure(job, dataFd, tick);
      yield* check(job.place, job.budgets, [snap]);
      return { ...(yield* writePayload(job, snap, { dataFd, source, tick, env })), created };
    } catch (err) {
      if (created) yield* removeMade([job.place]);
      throw err;
    }
  });
}

/** copyJobSteps in one go. */
export function runCopyJob(job: CopyJob): CopyResult {
  return drain(copyJobSteps(job));
}

/**
 * A start's jobs (each with the data directory the plan opened), a step at a time: every volume
 * measured, the budgets and the free space checked for all of them, then each written, a file at
 * a time. A failure removes every copy this start made (a copy that was there before keeps its
 * payload: another container of the pod reads it) and throws.
 */
export function* startJobSteps(start: StartJob, env: JobEnv = {}): Steps<CopyResult[]> {
  const { jobs } = start;
  if (jobs.length === 0) return [];
  const ticks = jobs.map((j) => deadlineTick(j.place.volume, start.deadline));
  const snaps: Snapshot[] = [];
  for (const [i, j] of jobs.entries()) snaps.push(yield* measure(j, j.data!.fd, ticks[i]!));
  yield* check(jobs[0]!.place, start.budgets, snaps);
  const done: CopyResult[] = [];
  const made: boolean[] = [];
  try {
    for (const [i, j] of jobs.entries()) {
      made[i] = !exists(copyDir(j.place));
      const w = { dataFd: j.data!.fd, source: j.data!.timestamped, tick: ticks[i]!, env };
      done.push({ ...(yield* writePayload(j, snaps[i]!, w)), created: made[i] });
    }
    return done;
  } catch (err) {
    yield* removeMade(jobs.filter((_, i) => made[i] === true).map((j) => j.place));
    throw err;
  }
}

/** startJobSteps in one go. */
export function runStartJob(start: StartJob): CopyResult[] {
  return drain(startJobSteps(start));
}

/**
 * Removes the copies a failed job made: every `..data` first (one unlink each), so that a process
 * that ends in the middle of the removals leaves copies with no `..data`, which the leftover
 * sweep removes whole (leftovers.ts), never a readable half of a refused start.
 */
function* removeMade(places: readonly CopyPlace[]): Steps<void> {
  for (const place of places) fs.rmSync(path.join(copyDir(place), DATA_LINK), { force: true });
  for (const place of places) yield* removeCopySteps(place);
}

/** The job's data directory: the caller's (open until the job has ended: the caller awaits it), or the kubelet's current one. */
function* withData<T>(job: CopyJob, fn: (dataFd: number, source: string) => Steps<T>): Steps<T> {
  if (job.data !== undefined) return yield* fn(job.data.fd, job.data.timestamped);
  const { place } = job;
  if (job.kubeletDir === undefined) throw new EnvhookError(`volume "${place.volume}": nothing to copy`);
  const data = openDataDir(place.volume, job.kubeletDir);
  try {
    if (data.timestamped === undefined)
      throw new EnvhookError(`volume "${place.volume}": ${job.kubeletDir} has no ..data: not laid out by the kubelet's atomic writer`);
    return yield* fn(data.fd, data.timestamped);
  } finally {
    closeDataDir(data);
  }
}

function measure(job: CopyJob, dataFd: number, tick: () => void): Steps<Snapshot> {
  return readSnapshot(job.place.volume, dataFd, job.owners, job.limits ?? DEFAULT_LIMITS, tick);
}

function* check(place: CopyPlace, budgets: CopyBudgets | undefined, snaps: readonly Snapshot[]): Steps<void> {
  const usage = yield* measureCopiesSteps(place.runDir);
  checkBudgets({ runDir: place.runDir, podUid: place.podUid, budgets: budgets ?? DEFAULT_BUDGETS, usage, snaps });
}

interface WriteFrom {
  dataFd: number;
  /** The kubelet's timestamped directory copied. */
  source: string;
  tick: () => void;
  env: JobEnv;
}

/** The measured payload written, a file at a time, and swapped in. */
function* writePayload(job: CopyJob, snap: Snapshot, { dataFd, source, tick, env }: WriteFrom): Steps<Omit<CopyResult, 'created'>> {
  const found = (job.want ?? []).map((w) => entryOf(snap, w));
  const { items, defaultOwner } = job.owners;
  const owned = snap.entries.filter((e) => e.kind === 'file' && (items.get(e.rel) ?? defaultOwner) !== undefined).map((e) => e.rel);
  const buf = copyBuffer();
  try {
    const fill = (e: Snapshot['entries'][number], fd: number) => copyFileContent(snap.volume, dataFd, e, fd, buf);
    const written = yield* writeCopy(job.place, snap, fill, { source, tick, removeLater: env.removeLater });
    return { ...written, source, found, owned };
  } finally {
    releaseBuffer(buf);
  }
}

function entryOf(snap: Snapshot, w: WantedEntry): string | undefined {
  return snap.entries.find((e) => e.ino === w.ino && (e.kind === 'dir') === w.dir)?.rel;
}

/** Copies kubelet volume `kubeletDir` (the atomic writer's layout) into the copy at `place`, in one go. */
export function copyVolume(place: CopyPlace, kubeletDir: string, owners: CopyOwners, limits: CopyLimits = DEFAULT_LIMITS): CopiedVolume {
  return runCopyJob({ place, kubeletDir, owners, limits });
}

/** A check run before each entry: past `deadline`, the job's one line. */
function deadlineTick(volume: string, deadline: bigint | undefined): () => void {
  if (deadline === undefined) return () => {};
  return () => {
    if (process.hrtime.bigint() > deadline) throw lateError(volume);
  };
}

/** The refusal of a copy that did not finish before the runtime's request deadline. */
export function lateError(volume: string): EnvhookError {
  return new EnvhookError(
    `volume "${volume}": its owned copy could not be made within the runtime's request timeout: ` +
      `give the volume fewer or smaller files, or fewer volumes owners in one container`,
  );
}

/** True when `path` exists (the copy's directory before a job writes it: what a failed job removes). */
function exists(path: string): boolean {
  return fs.lstatSync(path, { throwIfNoEntry: false }) !== undefined;
}
