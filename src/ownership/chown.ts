// KEP-5936 owners (docs/design.md#ownership): the chown of every prepared volume, the pipeline's one side effect
// besides the caller's flush. Runs in every stage: inject, the shim's create, precreate, the
// createRuntime hook (where it is the main work) and NRI's CreateContainer. Idempotent: a file
// whose owner is already right costs one lstat, so the shim and the hook may both run it for
// one container. In a dry run nothing changes; the files that would get an owner are listed.
// A volume the plan gave an owned copy (copy-plan.ts) is not chowned: its copy is made here
// instead, each file with its owner before the copy's `..data` is swapped (mirror/build.ts): in
// the NRI worker by its copier thread, awaited (chownVolumesAsync), elsewhere in place; a copy
// this process made for an earlier start of the pod, still current, is used as it is
// (copy-reuse.ts). A volume the container does not mount is left alone.
import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from '../log.ts';
import { describeError } from '../errors.ts';
import { DATA_LINK } from '../fs/datadir.ts';
import { runCopyJob, type CopyJob, type CopyResult } from '../mirror/copy.ts';
import { inlineCopier, type Copier } from '../mirror/copier.ts';
import { addSubPathMounts } from './copy-plan.ts';
import { isReused, rememberCopy, reusableCopy } from './copy-reuse.ts';
import type { CopyPlace } from '../mirror/layout.ts';
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
}

/** In this thread: the copies made in place (the shim's create, inject). `made`: the copies' directories made, for a rollback. */
export function chownVolumes(prepared: readonly PreparedVolume[], o: ChownOptions, made: CopyPlace[] = []): OwnedFile[] {
  const owned: OwnedFile[] = [];
  for (const p of prepared) {
    if (!p.copy || o.dryRun) {
      owned.push(...chownInPlace(p, o));
      continue;
    }
    const r = reusableCopy(p) ?? remembered(p, runCopyJob(copyJob(p, o.deadline)));
    if (r.created) made.push(p.copy.place);
    owned.push(...copied(p, r, o, inlineCopier()));
    if (p.copy) for (let job = catchUpJob(p, r.source, o.deadline); job; job = catchUpJob(p, tryCopy(job, p, o.log), o.deadline));
  }
  return owned;
}

/** The same in this thread. */
export function removeCopiesNow(places: readonly CopyPlace[], log: Logger): void {
  for (const place of places) {
    try {
      removeCopy(place);
    } catch (err) {
      log.warn({ volume: place.volume, err }, `owned copy of a refused start not removed: ${describeError(err)}`);
    }
  }
}

/**
 * Removes the copies a refused start made, by the copier, not awaited: the refusal is answered at
 * once, and the copier runs the removals before any job posted after them (a retried start's).
 */
export function removeCopies(places: readonly CopyPlace[], copier: Copier, log: Logger): void {
  for (const place of places)
    copier
      .removeCopy(place)
      .catch((err: unknown) => log.warn({ volume: place.volume, err }, `owned copy of a refused start not removed: ${describeError(err)}`));
}

/**
 * The copies made by `copier` (the NRI worker's thread, mirror/copier.ts), awaited one after the
 * other; the chown in place (an idmapped mount under NRI) as before, bounded by the deadline.
 */
export async function chownVolumesAsync(
  prepared: readonly PreparedVolume[],
  o: ChownOptions,
  copier: Copier,
  made: CopyPlace[] = [],
): Promise<OwnedFile[]> {
  const owned: OwnedFile[] = [];
  for (const p of prepared) {
    if (!p.copy || o.dryRun) {
      owned.push(...chownInPlace(p, o));
      continue;
    }
    const r = reusableCopy(p) ?? remembered(p, await copier.copy(copyJob(p, o.deadline)));
    if (r.created) made.push(p.copy.place);
    owned.push(...(await copiedAsync(p, r, o, copier)));
  }
  return owned;
}

/** `r`, the copy a start's job made, remembered for the pod's next starts (copy-reuse.ts). */
function remembered(p: PreparedVolume, r: CopyResult): CopyResult {
  rememberCopy(p, r);
  return r;
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
    void copier.removeCopy(copy.place).catch(() => {});
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

async function copiedAsync(p: PreparedVolume, r: CopyResult, o: ChownOptions, copier: Copier): Promise<OwnedFile[]> {
  const owned = copied(p, r, o, copier);
  if (p.copy) await catchUp(p, r.source, o, copier);
  return owned;
}

const CATCH_UP = 3;

/**
 * The kubelet may have swapped `..data` since the plan read it, and another process (the shim's
 * `envhook watch`) may have copied the newer payload before this swap put the older one back:
 * the copy follows the kubelet's current `..data` before the start goes on. Not a failure of the
 * start when it cannot (the copy holds a whole, owned, older payload; the watcher follows the
 * next rewrite).
 */
async function catchUp(p: PreparedVolume, source: string, o: ChownOptions, copier: Copier): Promise<void> {
  let done: string | undefined = source;
  for (let i = 0; i < CATCH_UP && done !== undefined; i++) {
    const job = catchUpJob(p, done, o.deadline);
    if (job === undefined) return;
    try {
      done = (await copier.copy(job)).source;
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

function tryCopy(job: CopyJob, p: PreparedVolume, log: Logger): string | undefined {
  try {
    return runCopyJob(job).source;
  } catch (err) {
    return notCaughtUp(p, log, err);
  }
}

function notCaughtUp(p: PreparedVolume, log: Logger, err: unknown): undefined {
  log.warn({ volume: p.volume, err }, `owned copy not brought up to the kubelet's rewrite: ${describeError(err)}`);
  return undefined;
}
