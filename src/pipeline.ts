// The one pipeline every entry point runs: load spec (caller) → identify the container →
// discover the pod lazily → resolve env → modify the spec (pure) → chown → return the new spec
// for the caller to flush (inject, shim), print (precreate) or drop (hook).
import type { Spec } from './oci/spec.ts';
import type { Settings } from './settings.ts';
import type { Logger } from './log.ts';
import { containerName, isKubernetes, isSandbox, type Annotations } from './k8s/identity.ts';
import { discoverPodDir, type PodDir } from './k8s/pod.ts';
import { findVolume, type VolumeLocator } from './k8s/volumes.ts';
import { envStep } from './resolve/step.ts';
import { ownershipStep } from './ownership/step.ts';
import { appliedCheckStep } from './resolve/applied.ts';

export type Stage = 'inject' | 'create' | 'precreate' | 'hook';

export interface PipelineOptions {
  settings: Settings;
  stage: Stage;
  log: Logger;
  /** Admin overrides for direct use and tests. */
  podDir?: string | undefined;
  volumes?: ReadonlyMap<string, string> | undefined;
  container?: string | undefined;
  /** Plan only: no chown, and the caller does not flush. */
  dryRun?: boolean | undefined;
}

/** What was (or, in a dry run, would be) done: names and sources, never values. */
export interface Plan {
  container: string | undefined;
  sandbox: boolean;
  env: { name: string; source: string }[];
  removed: string[];
  /** Optional env references whose file or key was missing (nothing set for them). */
  skipped?: { name: string; source: string }[];
  owners: { volume: string; path: string; uid: number; hostUid: number }[];
}

export interface PipelineContext {
  spec: Spec;
  annotations: Annotations;
  /** Container name from the runtime's annotations, or --container for plain bundles. */
  container: string | undefined;
  /** True for a bundle with no Kubernetes annotations (runc used directly). */
  plainBundle: boolean;
  volumes: VolumeLocator;
  options: PipelineOptions;
  log: Logger;
  plan: Plan;
}

/** A step returns the (possibly new) spec; it never writes config.json. */
export type Step = (spec: Spec, ctx: PipelineContext) => Spec;

export interface PipelineResult {
  spec: Spec;
  plan: Plan;
}

export function runPipeline(spec: Spec, options: PipelineOptions): PipelineResult {
  const annotations = (spec.annotations ?? {}) as Annotations;
  const plainBundle = !isKubernetes(annotations);
  const container = containerName(annotations) ?? options.container;
  const plan: Plan = { container, sandbox: isSandbox(annotations), env: [], removed: [], owners: [] };
  if (plan.sandbox) {
    options.log.debug({ stage: options.stage }, 'sandbox container: passed through');
    return { spec, plan };
  }
  const ctx: PipelineContext = { spec, annotations, container, plainBundle, volumes: lazyVolumes(spec, annotations, options), options, log: options.log, plan };
  let out = spec;
  for (const step of STEPS[options.stage]) out = step(out, ctx);
  return { spec: out, plan };
}

/**
 * The hook stage runs after the runtime read config.json: it cannot set env, only check that
 * an earlier stage did (envStep marks what it applied), then do the file work.
 */
const STEPS: Record<Stage, readonly Step[]> = {
  inject: [envStep, ownershipStep],
  create: [envStep, ownershipStep],
  precreate: [envStep, ownershipStep],
  hook: [appliedCheckStep, ownershipStep],
};

/** Pod discovery runs only when a step asks for a volume. */
function lazyVolumes(spec: Spec, annotations: Annotations, options: PipelineOptions): VolumeLocator {
  let pod: { value: PodDir | undefined } | undefined;
  const overrides = options.volumes ?? new Map<string, string>();
  return {
    find(name, kind) {
      if (!overrides.has(name)) pod ??= { value: discoverPodDir(spec, annotations, options.settings.kubeletRoot, options.podDir) };
      return findVolume({ pod: pod?.value, overrides }, name, kind);
    },
  };
}
