// KEP-5936 owners (SPEC §5), in every stage: inject, the shim's create, precreate and the
// createRuntime hook, where it is the main work. Idempotent: a file whose owner is already
// right costs one lstat, so the shim and the hook may both run it for one container.
// The spec is returned unchanged: the only side effect is the chown (none in a dry run).
import type { Step } from '../pipeline.ts';
import { readVolumeOwners } from './annotation.ts';
import { closeDataDir } from './datadir.ts';
import { prepareVolume, type PreparedVolume } from './prepare.ts';
import { chownTree } from './walk.ts';

export const ownershipStep: Step = (spec, ctx) => {
  const entries = readVolumeOwners(ctx.annotations);
  if (entries === undefined || entries.length === 0) return spec;
  const dryRun = ctx.options.dryRun === true;
  const prepared: PreparedVolume[] = [];
  try {
    // Check every volume before changing any.
    for (const entry of entries) prepared.push(prepareVolume(spec, ctx, entry));
    for (const p of prepared) {
      if (p.defaultOwner === undefined && p.items.size === 0) continue;
      // process.hrtime, not performance.now(): the global `performance` loads node:perf_hooks
      // on first use (~1 ms of every container start).
      const start = process.hrtime.bigint();
      const stats = chownTree(p.data.fd, {
        volume: p.volume,
        dev: p.data.dev,
        defaultOwner: p.defaultOwner,
        items: p.items,
        skipReserved: p.data.timestamped === undefined,
        dryRun,
        onFile: (path, o) => ctx.plan.owners.push({ volume: p.volume, path, uid: o.uid, hostUid: o.hostUid }),
      });
      const ms = Math.round(Number(process.hrtime.bigint() - start) / 1e5) / 10;
      ctx.log.info({ stage: ctx.options.stage, volume: p.volume, uidMapping: p.translation.kind, layout: p.data.timestamped ? 'atomic' : 'plain', ...stats, dryRun, ms }, 'volume owners');
    }
  } finally {
    for (const p of prepared) closeDataDir(p.data);
  }
  return spec;
};
