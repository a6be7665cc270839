// The one pipeline every entry point runs, in one direction:
//   facts (facts/)  →  plan (plan/plan-changes.ts: reads annotations and files, changes nothing)
//   →  apply (apply/: a pure function of the changes: a new config.json, an NRI adjustment)
//   →  chown (ownership/chown.ts: the one side effect)  →  flush (the caller: write config.json,
//   print it (precreate), drop it (hook), or answer the runtime (NRI)).
import type { Spec } from './oci/spec.ts';
import type { Settings } from './settings.ts';
import type { Logger } from './log.ts';
import type { Facts } from './facts/facts.ts';
import { factsFromSpec } from './facts/spec-facts.ts';
import { planChanges } from './plan/plan-changes.ts';
import { summarize, type Changes, type Plan } from './plan/changes.ts';
import { applyToSpec } from './apply/spec-applier.ts';
import { chownVolumes } from './ownership/chown.ts';
import { releaseOwners, type PreparedVolume } from './ownership/prepare.ts';
import { ownersRecordOf, writeOwnersRecord } from './watch/record.ts';

/** Which entry point runs: the hook stage can only check env (the runtime read config.json). */
export type Stage = 'inject' | 'create' | 'precreate' | 'hook' | 'nri';

export interface RunOptions {
  settings: Pick<Settings, 'kubeletRoot'>;
  stage: Stage;
  log: Logger;
  /** Plan only: no chown, and the caller does not flush. */
  dryRun?: boolean | undefined;
  /**
   * The run directory of `envhook watch` (shim nodes): after the chown, the pod's owners are
   * recorded there so that the watcher applies them again after the kubelet's rewrites.
   */
  recordOwnersIn?: string | undefined;
  /** The chown gives up with an error past this process.hrtime.bigint() (NRI's request timeout). */
  deadline?: bigint | undefined;
}

export interface PipelineOptions extends RunOptions {
  /** Admin overrides for direct use and tests. */
  podDir?: string | undefined;
  volumes?: ReadonlyMap<string, string> | undefined;
  container?: string | undefined;
}

export interface PipelineResult {
  spec: Spec;
  plan: Plan;
}

/** The pipeline on a config.json: the new spec (the same object when nothing changes) and the plan. */
export function runPipeline(spec: Spec, options: PipelineOptions): PipelineResult {
  const facts = factsFromSpec(spec, options);
  const { output, plan } = run(facts, options, (changes) => applyToSpec(spec, changes));
  return { spec: output, plan };
}

/** facts → plan → apply → chown, for any applier; the caller flushes the output. */
export function run<T>(facts: Facts, options: RunOptions, apply: (changes: Changes) => T): { output: T; plan: Plan } {
  const { stage, log } = options;
  const changes = planChanges(facts, { kubeletRoot: options.settings.kubeletRoot, env: stage === 'hook' ? 'verify' : 'resolve', log, stage });
  try {
    // Applied before the chown: an applier that refuses the changes (NRI cannot remove env)
    // fails the start before any file changed owner.
    const output = apply(changes);
    const owned = chownVolumes(changes.owners, { dryRun: options.dryRun === true, log, stage, deadline: options.deadline });
    if (options.recordOwnersIn !== undefined && options.dryRun !== true) recordOwners(options.recordOwnersIn, changes.owners, log);
    return { output, plan: summarize(changes, owned) };
  } finally {
    releaseOwners(changes.owners);
  }
}

/**
 * The start has done its work when this runs: a record that cannot be written (no /run, a run
 * directory someone else owns) costs the pod its owners after a rewrite, not its start.
 */
function recordOwners(runDir: string, owners: readonly PreparedVolume[], log: Logger): void {
  const record = ownersRecordOf(owners);
  if (record === undefined) return;
  try {
    writeOwnersRecord(runDir, record);
    log.debug({ pod: record.podUid, volumes: record.volumes.length }, 'owners recorded for envhook watch');
  } catch (err) {
    log.warn({ err, pod: record.podUid }, 'owners not recorded for envhook watch');
  }
}
