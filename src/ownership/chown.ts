// KEP-5936 owners (docs/design.md#ownership): the chown of every prepared volume, the pipeline's one side effect
// besides the caller's flush. Runs in every stage: inject, the shim's create, precreate, the
// createRuntime hook (where it is the main work) and NRI's CreateContainer. Idempotent: a file
// whose owner is already right costs one lstat, so the shim and the hook may both run it for
// one container. In a dry run nothing changes; the files that would get an owner are listed.
// A volume the plan gave an owned copy (copy-plan.ts) is not chowned: its copy is made here
// instead, each file with its owner before the copy's `..data` is swapped (mirror/build.ts): in
// the NRI worker by its sliced copier, awaited (chownVolumesAsync), elsewhere in place; a copy
// this process made for an earlier start of the pod, still current, is used as it is
// (copy-reuse.ts). A volume the container does not mount is left alone.
import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from '../log.ts';
import { describeError } from '../errors.ts';
import { DATA_LINK } from '../fs/datadir.ts';
import { runCopyJob, runStartJob, type CopyJob, type CopyResult, type StartJob } from '../mirror/copy.ts';
import { inlineCopier, type Copier } from '../mirror/copier.ts';
import { addSubPathMounts } from './copy-plan.ts';
import { isReused, releaseRefusedCopy, rememberCopy, reusableCopy } from './copy-reuse.ts';
import { copyDir, type CopyPlace } from '../mirror/layout.ts';
import type { CopyBudgets } from '../mirror/budget.ts';
import { removeCopy } from '../mirror/remove.ts';
import type { OwnedFile, PreparedVolume } from './prepare.ts';
import { chownTree } from './walk.ts';

export interface ChownOptions {
  dryRun: boolean;
  log: Logger;
  /** For the log line: which entry point ran. */
  stage: string;
  /** See WalkOptions.deadline; the copies' jobs get it too (mirror/copy.ts). */
  deadline?: bigint | undefined;
  /** The copies' budgets (mirror/budget.ts); undefined: the copier's own (the NRI worker's, from its settings), else the defaults. */
  budgets?: CopyBudgets | undefined;
}

/** A copy a start made (its directory was not there before), and the payload it holds now: what a refused start removes. */
export interface MadeCopy {
  place: CopyPlace;
  timestamped: string;
}

/** In this thread: the copies made in place (the shim's create, inject). `made`: the copies made, for a rollback. */
export function chownVolumes(prepared: readonly PreparedVolume[], o: ChownOptions, made: MadeCopy[] = []): OwnedFile[] {
  const { inPlace, copies } = split(prepared, o);
  const owned = inPlace.flatMap((p) => chownInPlace(p, o));
  const results = withReused(copies, (jobs) => runStartJob(startJob(jobs, o)));
  copies.forEach((p, i) => {
    const r = results[i]!;
    const mine = r.created ? made[made.push({ place: p.copy!.place, timestamped: r.timestamped }) - 1] : undefined;
    owned.push(...copied(p, r, o, inlineCopier()));
    for (let job = catchUpJob(p, r.source, o.deadline); job;) {
      const next = tryCopy({ ...job, budgets: o.budgets }, p, o.log);
      if (mine && next) mine.timestamped = next.timestamped;
      job = catchUpJob(p, next?.source, o.deadline);
    }
  });
  return owned;
}

/** The same in this thread. */
export function removeCopiesNow(made: readonly MadeCopy[], log: Logger): void {
  for (const { place, timestamped } of made) {
    if (!releaseRefusedCopy(copyDir(place), timestamped)) continue;
    try {
      removeCopy(place, timestamped);
    } catch (err) {
      log.warn({ volume: place.volume, err }, `owned copy of a refused start not removed: ${describeError(err)}`);
    }
  }
}

/**
 * Removes the copies a refused start made, by the copier, not awaited: the refusal is answered at
 * once, and the copier runs the removals before any job posted after them (a retried start's).
 * A copy another container's start has written since (its `..data` moved on), or used as it is
 * (copy-reuse.ts), is that one's: kept.
 */
export function removeCopies(made: readonly MadeCopy[], copier: Copier, log: Logger): void {
  for (const { place, timestamped } of made.filter((m) => releaseRefusedCopy(copyDir(m.place), m.timestamped)))
    copier
      .removeCopy(place, timestamped)
      .catch((err: unknown) => log.warn({ volume: place.volume, err }, `owned copy of a refused start not removed: ${describeError(err)}`));
}

/**
 * The copies made by `copier` (the NRI worker's thread, mirror/copier.ts), one job for all the
 * start's volumes, awaited; the chown in place (an idmapped mount under NRI) as before, bounded
 * by the deadline.
 */
export async function chownVolumesAsync(
  prepared: readonly PreparedVolume[],
  o: ChownOptions,
  copier: Copier,
  made: MadeCopy[] = [],
): Promise<OwnedFile[]> {
  const { inPlace, copies } = split(prepared, o);
  const owned = inPlace.flatMap((p) => chownInPlace(p, o));
  if (copies.length === 0) return owned;
  const results = await withReusedAsync(copies, (jobs) => copier.copyStart(startJob(jobs, o)));
  for (const [i, p] of copies.entries()) {
    const r = results[i]!;
    const mine = r.created ? made[made.push({ place: p.copy!.place, timestamped: r.timestamped }) - 1] : undefined;
    owned.push(...copied(p, r, o, copier));
    if (p.copy) await catchUp(p, r.source, o, copier, mine);
  }
  return owned;
}

/** The volumes chowned in place (or left alone), and those copied (never in a dry run). */
function split(prepared: readonly PreparedVolume[], o: ChownOptions): { inPlace: PreparedVolume[]; copies: PreparedVolume[] } {
  const copies = prepared.filter((p) => p.copy !== undefined && !o.dryRun);
  return { inPlace: prepared.filter((p) => !copies.includes(p)), copies };
}

function startJob(copies: readonly PreparedVolume[], { deadline, budgets }: ChownOptions): StartJob {
  return { jobs: copies.map((p) => copyJob(p, deadline)), deadline, budgets };
}

/**
 * Each copy's result: the copy this process made for an earlier start of the pod, used as it is
 * (copy-reuse.ts), or made by one start job of the others (`run`), remembered for the next starts.
 */
function withReused(copies: readonly PreparedVolume[], run: (jobs: PreparedVolume[]) => CopyResult[]): CopyResult[] {
  const reused = copies.map((p) => reusableCopy(p));
  const rest = copies.filter((_, i) => reused[i] === undefined);
  return merged(copies, reused, rest, rest.length === 0 ? [] : run(rest));
}

async function withReusedAsync(
  copies: readonly PreparedVolume[],
  run: (jobs: PreparedVolume[]) => Promise<CopyResult[]>,
): Promise<CopyResult[]> {
  const reused = copies.map((p) => reusableCopy(p));
  const rest = copies.filter((_, i) => reused[i] === undefined);
  return merged(copies, reused, rest, rest.length === 0 ? [] : await run(rest));
}

function merged(
  copies: readonly PreparedVolume[],
  reused: (CopyResult | undefined)[],
  rest: PreparedVolume[],
  made: CopyResult[],
): CopyResult[] {
  rest.forEach((p, i) => rememberCopy(p, made[i]!));
  let next = 0;
  return copies.map((_, i) => reused[i] ?? made[next++]!);
}

/** The job of a start's copy: the data directory the plan opened and checked, the owners, the subPath entries wanted. */
function copyJob(p: PreparedVolume, deadline: bigint | undefined): CopyJob {
  const copy = p.copy!;
  return {
    place: copy.place,
    data: { fd: p.data.fd, timestamped: copy.source },
    owners: { defaultOwner: p.defaultOwner, items: p.items },
    limits: copy.limits,
    deadline,
    want: copy.subPaths.map((s) => s.want),
  };
}

function chownInPlace(p: PreparedVolume, { dryRun, log, stage, deadline }: ChownOptions): OwnedFile[] {
  const owned: OwnedFile[] = [];
  if (p.notMounted === true || (p.defaultOwner === undefined && p.items.size === 0)) return owned;
  // process.hrtime, not performance.now(): the global `performance` loads node:perf_hooks
  // on first use, a cost to every container start.
  const start = process.hrtime.bigint();
  const stats = chownTree(p.data.fd, {
    volume: p.volume,
    dev: p.data.dev,
    defaultOwner: p.defaultOwner,
    items: p.items,
    skipReserved: p.data.timestamped === undefined,
    dryRun,
    deadline,
    onFile: (path, o) => owned.push({ volume: p.volume, path, uid: o.uid, hostUid: o.hostUid }),
  });
  const ms = Math.round(Number(process.hrtime.bigint() - start) / 1e5) / 10;
  log.info(
    { stage, volume: p.volume, uidMapping: p.translation.kind, layout: p.data.timestamped ? 'atomic' : 'plain', ...stats, dryRun, ms },
    'volume owners',
  );
  return owned;
}

/** A copy made: its subPath mounts completed, the files that got an owner listed, logged. */
function copied(p: PreparedVolume, r: CopyResult, o: ChownOptions, copier: Copier): OwnedFile[] {
  const copy = p.copy!;
  addSubPathMounts(copy, r.found);
  // Only subPaths of an earlier payload: the container reads the kubelet's files, chowned as before.
  if (copy.mounts.length === 0) {
    p.copy = undefined;
    if (r.created) void copier.removeCopy(copy.place, r.timestamped).catch(() => {});
    return chownInPlace(p, o);
  }
  // A copy used as it is changed nothing: a debug line (`nri: adjusted` names the mount).
  const reused = isReused(r);
  (reused ? o.log.debug : o.log.info).call(
    o.log,
    {
      stage: o.stage,
      volume: p.volume,
      uidMapping: p.translation.kind,
      layout: 'copy',
      reused,
      files: r.files,
      bytes: r.bytes,
      dir: copy.dir,
      dryRun: false,
    },
    'volume owners',
  );
  return r.owned.map((rel) => {
    const owner = (p.items.get(rel) ?? p.defaultOwner)!;
    return { volume: p.volume, path: rel, uid: owner.uid, hostUid: owner.hostUid };
  });
}

const CATCH_UP = 3;

/**
 * The kubelet may have swapped `..data` since the plan read it, and another process (the shim's
 * `envhook watch`) may have copied the newer payload before this swap put the older one back:
 * the copy follows the kubelet's current `..data` before the start goes on. Not a failure of the
 * start when it cannot (the copy holds a whole, owned, older payload; the watcher follows the
 * next rewrite).
 */
async function catchUp(p: PreparedVolume, source: string, o: ChownOptions, copier: Copier, mine: MadeCopy | undefined): Promise<void> {
  let done: string | undefined = source;
  for (let i = 0; i < CATCH_UP && done !== undefined; i++) {
    const job = catchUpJob(p, done, o.deadline);
    if (job === undefined) return;
    try {
      const r = await copier.copy(job);
      if (mine) mine.timestamped = r.timestamped;
      done = r.source;
    } catch (err) {
      done = notCaughtUp(p, o.log, err);
    }
  }
}

/** The job that brings the copy to the kubelet's current `..data`, or undefined when it holds it (`done`) already. */
function catchUpJob(p: PreparedVolume, done: string | undefined, deadline: bigint | undefined): CopyJob | undefined {
  if (done === undefined || (p.catchUps = (p.catchUps ?? 0) + 1) > CATCH_UP) return undefined;
  let now: string;
  try {
    now = fs.readlinkSync(path.join(p.dir, DATA_LINK));
  } catch {
    return undefined;
  }
  if (now === done) return undefined;
  return {
    place: p.copy!.place,
    kubeletDir: p.dir,
    owners: { defaultOwner: p.defaultOwner, items: p.items },
    limits: p.copy!.limits,
    deadline,
  };
}

function tryCopy(job: CopyJob, p: PreparedVolume, log: Logger): CopyResult | undefined {
  try {
    return runCopyJob(job);
  } catch (err) {
    return notCaughtUp(p, log, err);
  }
}

function notCaughtUp(p: PreparedVolume, log: Logger, err: unknown): undefined {
  log.warn({ volume: p.volume, err }, `owned copy not brought up to the kubelet's rewrite: ${describeError(err)}`);
  return undefined;
}
