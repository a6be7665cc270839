// One owned copy as a job (docs/design-copies.md#owned-copies-off-the-event-loop): the kubelet's current
// payload (what its `..data` points at) measured and checked (snapshot.ts), the budgets and the
// run directory's free space checked (budget.ts), then written a file at a time and swapped in
// (build.ts, file-copy.ts). A container's start is one job of all its volumes (runStartJob):
// measured and checked together before the first write, made all or none. The same function runs in the NRI worker's copier thread (copier.ts) and in
// place where a process has nothing else to answer (the shim's create), so both are bounded
// alike: by the volume's limits, and by the job's deadline, checked before every entry read and
// every entry written (past it the job gives up with one line naming the volume; what it wrote
// is removed, the copy stays as it was). A job is plain data, so it can be posted to a thread:
// a data directory the caller holds open is named by its descriptor (one process, one fd table).
import fs from 'node:fs';
import path from 'node:path';
import { EnvhookError } from '../errors.ts';
import { closeDataDir, DATA_LINK, openDataDir } from '../fs/datadir.ts';
import { copyDir, type CopyPlace } from './layout.ts';
import { removeCopy } from './remove.ts';
import { writeCopy, type WrittenCopy } from './build.ts';
import { checkBudgets, DEFAULT_BUDGETS, type CopyBudgets } from './budget.ts';
import { copyBuffer, copyFileContent, releaseBuffer } from './file-copy.ts';
import { readSnapshot, type CopyLimits, type CopyOwners, DEFAULT_LIMITS, type Snapshot, type WantedEntry } from './snapshot.ts';
import { measureCopies } from './usage.ts';

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

/** Told before a payload directory is made (copier.ts removes it should the thread be stopped before it is swapped in). */
export type OnWriting = (w: { place: CopyPlace; name: string; created: boolean }) => void;

export interface CopyResult extends CopiedVolume {
  /** For each of the job's `want`, its path below the payload, or undefined when the payload has no such entry. */
  found: (string | undefined)[];
  /** The files that got an owner of the job's (the item's or the default), by path below the payload. */
  owned: string[];
  /** The copy's directory was made by this job (what a refused start removes: one there before is other containers' too). */
  created: boolean;
}

/** Runs the job (a rewrite, a catch-up) in this thread. Throws EnvhookError (a refusal, late, over a budget, or an unusable volume). */
export function runCopyJob(job: CopyJob, onWriting: OnWriting = () => {}): CopyResult {
  return withData(job, (dataFd, source) => {
    const created = !exists(copyDir(job.place));
    const tick = deadlineTick(job.place.volume, job.deadline);
    try {
      const snap = measure(job, dataFd, tick);
      check(job.place, job.budgets, [snap]);
      return { ...writePayload(job, snap, dataFd, source, tick, onWriting, created), created };
    } catch (err) {
      if (created) removeMade([job.place]);
      throw err;
    }
  });
}

/**
 * Runs a start's jobs (each with the data directory the plan opened) in this thread: every volume
 * measured, the budgets and the free space checked for all of them, then each written, a file at a
 * time. A failure removes every copy this start made (a copy that was there before keeps its
 * payload: another container of the pod reads it) and throws.
 */
export function runStartJob(start: StartJob, onWriting: OnWriting = () => {}): CopyResult[] {
  const { jobs } = start;
  if (jobs.length === 0) return [];
  const ticks = jobs.map((j) => deadlineTick(j.place.volume, start.deadline));
  const snaps = jobs.map((j, i) => measure(j, j.data!.fd, ticks[i]!));
  check(jobs[0]!.place, start.budgets, snaps);
  const done: CopyResult[] = [];
  const made: boolean[] = [];
  try {
    jobs.forEach((j, i) => {
      made[i] = !exists(copyDir(j.place));
      done.push({ ...writePayload(j, snaps[i]!, j.data!.fd, j.data!.timestamped, ticks[i]!, onWriting, made[i]), created: made[i] });
    });
    return done;
  } catch (err) {
    removeMade(jobs.filter((_, i) => made[i] === true).map((j) => j.place));
    throw err;
  }
}

/**
 * Removes the copies a failed job made: every `..data` first (one unlink each), so that a thread
 * stopped in the middle of the removals (past its deadline) leaves copies with no `..data`, which
 * the next thread's clean-up removes whole (remove.ts cleanUpCopies), never a whole copy of a
 * refused start.
 */
function removeMade(places: readonly CopyPlace[]): void {
  for (const place of places) fs.rmSync(path.join(copyDir(place), DATA_LINK), { force: true });
  for (const place of places) removeCopy(place);
}

/** The job's data directory: the caller's (open until the job has ended: copier.ts waits for a stopped thread's exit), or the kubelet's current one. */
function withData<T>(job: CopyJob, fn: (dataFd: number, source: string) => T): T {
  if (job.data !== undefined) return fn(job.data.fd, job.data.timestamped);
  const { place } = job;
  if (job.kubeletDir === undefined) throw new EnvhookError(`volume "${place.volume}": nothing to copy`);
  const data = openDataDir(place.volume, job.kubeletDir);
  try {
    if (data.timestamped === undefined)
      throw new EnvhookError(`volume "${place.volume}": ${job.kubeletDir} has no ..data: not laid out by the kubelet's atomic writer`);
    return fn(data.fd, data.timestamped);
  } finally {
    closeDataDir(data);
  }
}

function measure(job: CopyJob, dataFd: number, tick: () => void): Snapshot {
  return readSnapshot(job.place.volume, dataFd, job.owners, job.limits ?? DEFAULT_LIMITS, tick);
}

function check(place: CopyPlace, budgets: CopyBudgets | undefined, snaps: readonly Snapshot[]): void {
  checkBudgets({
    runDir: place.runDir,
    podUid: place.podUid,
    budgets: budgets ?? DEFAULT_BUDGETS,
    usage: measureCopies(place.runDir),
    snaps,
  });
}

/** The measured payload written, a file at a time, and swapped in; `created`: the copy's directory is this job's. */
function writePayload(
  job: CopyJob,
  snap: Snapshot,
  dataFd: number,
  source: string,
  tick: () => void,
  onWriting: OnWriting,
  created: boolean,
): Omit<CopyResult, 'created'> {
  const found = (job.want ?? []).map((w) => entryOf(snap, w));
  const { items, defaultOwner } = job.owners;
  const owned = snap.entries.filter((e) => e.kind === 'file' && (items.get(e.rel) ?? defaultOwner) !== undefined).map((e) => e.rel);
  const buf = copyBuffer();
  try {
    const fill = (e: Snapshot['entries'][number], fd: number) => copyFileContent(snap.volume, dataFd, e, fd, buf);
    const onDir = (name: string) => onWriting({ place: job.place, name, created });
    return { ...writeCopy(job.place, snap, fill, source, undefined, tick, onDir), source, found, owned };
  } finally {
    releaseBuffer(buf);
  }
}

function entryOf(snap: Snapshot, w: WantedEntry): string | undefined {
  return snap.entries.find((e) => e.ino === w.ino && (e.kind === 'dir') === w.dir)?.rel;
}

/** Copies kubelet volume `kubeletDir` (the atomic writer's layout) into the copy at `place`, in this thread. */
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
