// What the pipeline knows about one container before it does anything: plain data, gathered
// from a config.json (facts/spec-facts.ts) or from an NRI CreateContainer request (facts/nri-facts.ts),
// so the plan (plan/plan-changes.ts) does not care which runtime asked.
import type { Annotations } from '../k8s/identity.ts';
import type { PodSource } from '../k8s/pod.ts';
import type { IdMapping, MountLike } from '../ownership/uidmap.ts';

export interface Facts {
  /** Every annotation the runtime gives; envhook.io/* among them are the pod author's (untrusted). */
  annotations: Annotations;
  /** The container's name in the pod; undefined for a plain bundle without --container. */
  container: string | undefined;
  /** A pod sandbox (pause) container: passed through untouched. */
  sandbox: boolean;
  /** The process env the runtime built, `NAME=value` entries in order. */
  env: readonly string[];
  /** The container's mounts and user-namespace UID mappings: how an owner UID reaches the disk. */
  mounts: readonly MountLike[];
  uidMappings: readonly IdMapping[] | undefined;
  /** Where the pod directory comes from (k8s/pod.ts). */
  pod: PodSource;
  /** Admin overrides for direct use and tests: volume name → host directory. */
  volumes: ReadonlyMap<string, string>;
}
