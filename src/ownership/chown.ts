// KEP-5936 owners (docs/design.md#ownership): the chown of every prepared volume, the pipeline's one side effect
// besides the caller's flush. Runs in every stage: inject, the shim's create, precreate, the
// createRuntime hook (where it is the main work) and NRI's CreateContainer. Idempotent: a file
// whose owner is already right costs one lstat, so the shim and the hook may both run it for
// one container. In a dry run nothing changes; the files that would get an owner are listed.
import type { Logger } from '../log.ts';
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
