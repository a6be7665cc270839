// One owned copy as a job (docs/design-copies.md#owned-copies-off-the-event-loop): the kubelet's current
// payload (what its `..data` points at) read and checked (snapshot.ts), then written and swapped
// in (build.ts). The same function runs in the NRI worker's copier thread (copier.ts) and in
// place where a process has nothing else to answer (the shim's create), so both are bounded
// alike: by the volume's limits, and by the job's deadline, checked before every entry read and
// every entry written (past it the job gives up with one line naming the volume; what it wrote
// is removed, the copy stays as it was). A job is plain data, so it can be posted to a thread:
// a data directory the caller holds open is named by its descriptor (one process, one fd table).
import fs from 'node:fs';
import { EnvhookError } from '../errors.ts';
import { closeDataDir, openDataDir } from '../fs/datadir.ts';
import { copyDir, type CopyPlace } from './layout.ts';
import { removeCopy } from './remove.ts';
import { writeCopy, type WrittenCopy } from './build.ts';
import {
  readSnapshot,
  releaseSnapshot,
  type CopyLimits,
  type CopyOwners,
  DEFAULT_LIMITS,
  type Snapshot,
  type WantedEntry,
} from './snapshot.ts';

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
}

export interface CopyResult extends CopiedVolume {
  /** For each of the job's `want`, its path below the payload, or undefined when the payload has no such entry. */
  found: (string | undefined)[];
  /** The files that got an owner of the job's (the item's or the default), by path below the payload. */
  owned: string[];
  /** The copy's directory was made by this job (what a refused start removes: one there before is other containers' too). */
  created: boolean;
}

/** Runs the job in this thread. Throws EnvhookError (a refusal, late, or an unusable volume). */
export function runCopyJob(job: CopyJob): CopyResult {
  const { place } = job;
  // The caller's descriptor, open until the job has ended (copier.ts waits for a stopped thread's exit).
  if (job.data !== undefined) return copyFrom(job, job.data.fd, job.data.timestamped);
  if (job.kubeletDir === undefined) throw new EnvhookError(`volume "${place.volume}": nothing to copy`);
  const data = openDataDir(place.volume, job.kubeletDir);
  try {
    if (data.timestamped === undefined)
      throw new EnvhookError(`volume "${place.volume}": ${job.kubeletDir} has no ..data: not laid out by the kubelet's atomic writer`);
    return copyFrom(job, data.fd, data.timestamped);
  } finally {
    closeDataDir(data);
  }
}

/** A job that fails removes the copy's directory if it made it (a failed write has removed its own payload already). */
function copyFrom(job: CopyJob, dataFd: number, source: string): CopyResult {
  const created = !exists(copyDir(job.place));
  try {
    return { ...copyPayload(job, dataFd, source), created };
  } catch (err) {
    if (created) removeCopy(job.place);
    throw err;
  }
}

function copyPayload(job: CopyJob, dataFd: number, source: string): Omit<CopyResult, 'created'> {
  const tick = deadlineTick(job.place.volume, job.deadline);
  const snap = readSnapshot(job.place.volume, dataFd, job.owners, job.limits ?? DEFAULT_LIMITS, tick);
  try {
    const found = (job.want ?? []).map((w) => entryOf(snap, w));
    const { items, defaultOwner } = job.owners;
    const owned = snap.entries.filter((e) => e.kind === 'file' && (items.get(e.rel) ?? defaultOwner) !== undefined).map((e) => e.rel);
    return { ...writeCopy(job.place, snap, source, undefined, tick), source, found, owned };
  } finally {
    releaseSnapshot(snap);
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
