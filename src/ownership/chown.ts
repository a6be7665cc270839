// KEP-5936 owners (docs/design.md#ownership): the chown of every prepared volume, the pipeline's one side effect
// besides the caller's flush. Runs in every stage: inject, the shim's create, precreate, the
// createRuntime hook (where it is the main work) and NRI's CreateContainer. Idempotent: a file
// whose owner is already right costs one lstat, so the shim and the hook may both run it for
// one container. In a dry run nothing changes; the files that would get an owner are listed.
// A volume the plan gave an owned copy (copy-plan.ts) is not chowned: its copy is written here
// instead, each file with its owner before the copy's `..data` is swapped (mirror/build.ts).
import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from '../log.ts';
import { describeError } from '../errors.ts';
import { DATA_LINK } from '../fs/datadir.ts';
import { writeCopy } from '../mirror/build.ts';
import { copyVolume } from '../mirror/copy.ts';
import { inMemory } from '../mirror/layout.ts';
import type { OwnedFile, PreparedVolume } from './prepare.ts';
import { chownTree } from './walk.ts';

export interface ChownOptions {
  dryRun: boolean;
  log: Logger;
  /** For the log line: which entry point ran. */
  stage: string;
  /** See WalkOptions.deadline. */
  deadline?: bigint | undefined;
}

export function chownVolumes(prepared: readonly PreparedVolume[], { dryRun, log, stage, deadline }: ChownOptions): OwnedFile[] {
  const owned: OwnedFile[] = [];
  for (const p of prepared) {
    if (p.copy) {
      owned.push(...writeOwnedCopy(p, { dryRun, log, stage }));
      continue;
    }
    if (p.defaultOwner === undefined && p.items.size === 0) continue;
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
  }
  return owned;
}

/** The copy written and swapped in (none in a dry run); its files that got an owner listed. */
function writeOwnedCopy(p: PreparedVolume, { dryRun, log, stage }: Omit<ChownOptions, 'deadline'>): OwnedFile[] {
  const copy = p.copy!;
  const start = process.hrtime.bigint();
  const owned: OwnedFile[] = [];
  for (const e of copy.snapshot.entries) {
    const o = e.kind === 'file' ? (p.items.get(e.rel) ?? p.defaultOwner) : undefined;
    if (o) owned.push({ volume: p.volume, path: e.rel, uid: o.uid, hostUid: o.hostUid });
  }
  if (!dryRun) {
    writeCopy(copy.place, copy.snapshot, copy.source);
    catchUp(p, log);
    warnOnDisk(copy.place.runDir, log);
  }
  const ms = Math.round(Number(process.hrtime.bigint() - start) / 1e5) / 10;
  const { files, bytes } = copy.snapshot;
  log.info(
    { stage, volume: p.volume, uidMapping: p.translation.kind, layout: 'copy', files, bytes, dir: copy.dir, dryRun, ms },
    'volume owners',
  );
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
function catchUp(p: PreparedVolume, log: Logger): void {
  let copied = p.data.timestamped;
  for (let i = 0; i < CATCH_UP; i++) {
    let now: string | undefined;
    try {
      now = fs.readlinkSync(path.join(p.dir, DATA_LINK));
    } catch {
      return;
    }
    if (now === copied) return;
    try {
      copied = copyVolume(p.copy!.place, p.dir, p).source;
    } catch (err) {
      log.warn({ volume: p.volume, err }, `owned copy not brought up to the kubelet's rewrite: ${describeError(err)}`);
      return;
    }
  }
}

const checkedRunDirs = new Set<string>();

/**
 * The copies hold secrets: they belong in memory, as the kubelet keeps secret volumes. A run
 * directory on disk is warned about once per process, not refused: the kubelet itself keeps
 * configMap volumes on disk, and a node whose /run is not tmpfs would otherwise lose owners.
 */
function warnOnDisk(runDir: string, log: Logger): void {
  if (checkedRunDirs.has(runDir)) return;
  checkedRunDirs.add(runDir);
  if (!inMemory(runDir))
    log.warn({ runDir }, `run directory ${runDir} is not on tmpfs: owned copies of secret volumes are kept on disk (mount a tmpfs there)`);
}
