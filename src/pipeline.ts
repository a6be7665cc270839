// The one pipeline every entry point runs, in one direction:
//   facts (facts/)  →  plan (plan/plan-changes.ts: reads annotations and files, changes nothing)
//   →  apply (apply/: a pure function of the changes: a new config.json, an NRI adjustment)
//   →  chown (ownership/chown.ts: the one side effect)  →  flush (the caller: bundle/flush.ts
//   writes config.json or prints it (precreate), the hook drops it, NRI answers the runtime).
// The caller brings the facts and the applier: bundle/spec-pipeline.ts for a config.json,
// nri/worker/handler.ts for an NRI request. Owned copies are made in the chown step: in this
// thread by run(), by a copier (mirror/copier.ts: the NRI worker's thread) awaited by runAsync(),
// so that no work a pod chooses runs on the NRI worker's event loop. Either way a refused start
// removes the copies it made.
import type { Settings } from './settings.ts';
import type { Logger } from './log.ts';
import type { Facts } from './facts/facts.ts';
import { planChanges, type PlanOptions } from './plan/plan-changes.ts';
import { summarize, type Changes, type Plan } from './plan/changes.ts';
import { chownVolumes, chownVolumesAsync, removeCopies, removeCopiesNow, type MadeCopy } from './ownership/chown.ts';
import type { CopyBudgets } from './mirror/budget.ts';
import type { Copier } from './mirror/copier.ts';
import { releaseOwners, type PreparedVolume } from './ownership/prepare.ts';

/** Which entry point runs: the hook stage can only check env (the runtime read config.json). */
export type Stage = 'inject' | 'create' | 'precreate' | 'hook' | 'nri';

export interface RunOptions {
  settings: Pick<Settings, 'kubeletRoot'>;
  stage: Stage;
  log: Logger;
  /** Plan only: no chown, and the caller does not flush. */
  dryRun?: boolean | undefined;
  /** Owned copies where the entry point points mounts at them (NRI, the shim's create); undefined: chown in place. */
  copies?: PlanOptions['copies'];
  /** The chown gives up with an error past this process.hrtime.bigint() (NRI's request timeout). */
  deadline?: bigint | undefined;
  /** The owned copies' budgets (mirror/budget.ts) where the copies are made in this thread (the shim's create). */
  budgets?: CopyBudgets | undefined;
  /**
   * After the chown (never in a dry run), while the owners are still open: the config.json
   * path records them for `envhook watch` there. It must not throw.
   */
  afterChown?: ((owners: readonly PreparedVolume[]) => void) | undefined;
}

/** facts → plan → apply → chown, for any applier; the caller flushes the output. Copies are made in this thread. */
export function run<T>(facts: Facts, options: RunOptions, apply: (changes: Changes) => T): { output: T; plan: Plan } {
  const changes = plan(facts, options);
  const made: MadeCopy[] = [];
  try {
    // Applied before the chown: an applier that refuses the changes (NRI cannot remove env)
    // fails the start before any file changed owner; applied again after copies, with the
    // subPath mounts the copies found.
    let output = apply(changes);
    const owned = chownVolumes(changes.owners, chownOptions(options), made);
    if (changes.owners.some((p) => p.copy !== undefined)) output = apply(changes);
    if (options.dryRun !== true) options.afterChown?.(changes.owners);
    return { output, plan: summarize(changes, owned) };
  } catch (err) {
    // All or nothing: the copies this start made go with it.
    removeCopiesNow(made, options.log);
    throw err;
  } finally {
    releaseOwners(changes.owners);
  }
}

/**
 * The same, with the copies made by `copier` (the NRI worker's sliced copier) and awaited, so
 * that the caller's event loop answers other requests meanwhile. The applier runs after the
 * copies: the subPath mounts point at entries the copy found (ownership/copy-plan.ts).
 */
export async function runAsync<T>(
  facts: Facts,
  options: RunOptions,
  copier: Copier,
  apply: (changes: Changes) => T,
): Promise<{ output: T; plan: Plan }> {
  const changes = plan(facts, options);
  const made: MadeCopy[] = [];
  try {
    // Applied first as a check: an applier that refuses the changes (NRI cannot remove env) fails
    // the start before any copy is made; applied again with the copies' subPath mounts.
    apply(changes);
    const owned = await chownVolumesAsync(changes.owners, chownOptions(options), copier, made);
    const output = apply(changes);
    if (options.dryRun !== true) options.afterChown?.(changes.owners);
    return { output, plan: summarize(changes, owned) };
  } catch (err) {
    // All or nothing: the copies this start made go with it (a failed job removed its own), unless
    // another container's start has written them since (chown.ts removeCopies).
    removeCopies(made, copier, options.log);
    throw err;
  } finally {
    releaseOwners(changes.owners);
  }
}

function plan(facts: Facts, options: RunOptions): Changes {
  const { stage, log } = options;
  return planChanges(facts, {
    kubeletRoot: options.settings.kubeletRoot,
    env: stage === 'hook' ? 'verify' : 'resolve',
    log,
    stage,
    copies: options.copies,
  });
}

function chownOptions(options: RunOptions) {
  return { dryRun: options.dryRun === true, log: options.log, stage: options.stage, deadline: options.deadline, budgets: options.budgets };
}
