// The pipeline on a bundle's config.json (inject, the shim's create, precreate, the hook): facts
// from the spec, the config.json applier, and, on shim nodes, the pod's owners recorded in the
// run directory of `envhook watch`. The caller flushes the new spec (flush.ts).
import type { Spec } from '../oci/spec.ts';
import type { Logger } from '../log.ts';
import { factsFromSpec } from '../facts/spec-facts.ts';
import { applyToSpec } from '../apply/spec-applier.ts';
import type { Plan } from '../plan/changes.ts';
import type { PreparedVolume } from '../ownership/prepare.ts';
import { run, type RunOptions } from '../pipeline.ts';
import { mergeRecords, ownersRecordOf, readOwnersRecord, writeOwnersRecord, type OwnersRecord } from '../watch/record.ts';

export interface PipelineOptions extends Omit<RunOptions, 'afterChown'> {
  /**
   * The run directory of `envhook watch` (shim nodes): after the chown, the pod's owners are
   * recorded there so that the watcher applies them again after the kubelet's rewrites.
   */
  recordOwnersIn?: string | undefined;
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
  const { recordOwnersIn: runDir, log } = options;
  const afterChown = runDir === undefined ? undefined : (owners: readonly PreparedVolume[]) => recordOwners(runDir, owners, log);
  const { output, plan } = run(facts, { ...options, afterChown }, (changes) => applyToSpec(spec, changes));
  return { spec: output, plan };
}

/**
 * The start has done its work when this runs: a record that cannot be written (no /run, a run
 * directory someone else owns) costs the pod its owners after a rewrite, not its start.
 */
function recordOwners(runDir: string, owners: readonly PreparedVolume[], log: Logger): void {
  const next = ownersRecordOf(owners);
  if (next === undefined) return;
  try {
    const record = mergeRecords(readRecordIfAny(runDir, next.podUid), next);
    writeOwnersRecord(runDir, record);
    log.debug({ pod: record.podUid, volumes: record.volumes.length }, 'owners recorded for envhook watch');
  } catch (err) {
    log.warn({ err, pod: next.podUid }, 'owners not recorded for envhook watch');
  }
}

/** The pod's record as the pod's earlier creates left it; none (or one refused): this create's alone. */
function readRecordIfAny(runDir: string, podUid: string): OwnersRecord | undefined {
  try {
    return readOwnersRecord(runDir, `${podUid}.json`);
  } catch {
    return undefined;
  }
}
