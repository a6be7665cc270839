// The NRI applier: the changes as an NRI container adjustment (docs/design.md#nri-mode). NRI replaces a
// variable the container already has and appends a new one, so the variables set are given in
// the order they were first set, as the config.json applier appends them.
//
// Removal: NRI 0.8.0 on containerd 2.1 applies a removal (`-NAME`) only to the request shown to
// later plugins, never to the container's spec: it is silently dropped. A container whose
// `serviceLinks: false` would remove variables therefore fails to be created, with a message
// that says what to do, rather than start with the service links it asked to be rid of.
// `removeEnv: true` is for a runtime where a test has shown removals to work. A pod that runs
// under envhook's own runtime handler (`guarded`) is left whole to that handler instead: an
// empty adjustment, no applied mark, so its front runs the shim pipeline, which can remove.
import { EnvhookError } from '../errors.ts';
import type { Changes } from '../plan/changes.ts';
import type { NriMount } from '../facts/nri-facts.ts';
import { APPLIED_KEY, SERVICE_LINKS_KEY } from '../k8s/annotation-keys.ts';

/** The applier's output; the NRI session turns it into NRI's ContainerAdjustment. */
export interface NriAdjustment {
  /** Variables to add or replace, in order. */
  env: { key: string; value: string }[];
  /** Variable names to remove from the container's env. */
  removeEnv: string[];
  /** Annotations to add or replace on the container. */
  annotations: Record<string, string>;
  /** Mounts that replace the container's mount of the same destination: volumes read through envhook's owned copy. */
  mounts?: NriMount[];
}

export const EMPTY_ADJUSTMENT: NriAdjustment = Object.freeze({ env: [], removeEnv: [], annotations: {} }) as NriAdjustment;

export interface NriApplyOptions {
  /** The runtime applies env removals (none proven yet: default false). */
  removeEnv?: boolean | undefined;
  /** The pod runs under envhook's runtime handler, whose front applies what NRI cannot. */
  guarded?: boolean | undefined;
}

export function toNriAdjustment(changes: Changes, options: NriApplyOptions = {}): NriAdjustment {
  const { env, mark } = changes;
  // The copies are written whatever happens to the env: the container must read them.
  const mounts = copiedMounts(changes);
  const onlyMounts = (): NriAdjustment => (mounts.length === 0 ? EMPTY_ADJUSTMENT : { env: [], removeEnv: [], annotations: {}, mounts });
  if (mark === undefined) return onlyMounts();
  // Nothing asked for this container, but its pod asks for env: the mark alone says it was answered.
  if (env === undefined) return { env: [], removeEnv: [], annotations: { [APPLIED_KEY]: mark }, ...(mounts.length > 0 ? { mounts } : {}) };
  if (env.removed.length > 0 && options.removeEnv !== true) {
    if (options.guarded) return onlyMounts();
    throw removalUnsupported(changes.container, env.removed.length);
  }
  const vars: NriAdjustment['env'] = [];
  env.values.forEach((value, key) => vars.push({ key, value }));
  return {
    env: vars,
    removeEnv: [...env.removed],
    annotations: { [APPLIED_KEY]: mark },
    ...(mounts.length > 0 ? { mounts } : {}),
  };
}

/**
 * Each mount of a copied volume again, for the same destination with the same type and options
 * (`ro`, `rbind`, propagation), its source the owned copy: NRI replaces a container's mount by
 * the adjustment's mount of the same destination.
 */
function copiedMounts(changes: Changes): NriMount[] {
  return changes.owners.flatMap((p) =>
    (p.copy?.mounts ?? []).map((m) => ({ destination: m.destination, source: m.source, type: m.type, options: [...m.options] })),
  );
}

function removalUnsupported(container: string | undefined, count: number): EnvhookError {
  return new EnvhookError(
    `annotation "${SERVICE_LINKS_KEY}": container ${JSON.stringify(container ?? '')} would have ${count} service ${count === 1 ? 'variable' : 'variables'} removed, ` +
      'but NRI on this runtime drops removals: set enableServiceLinks: false in the pod spec instead, ' +
      "or give the pod runtimeClassName: envhook (envhook's runtime handler removes them)",
  );
}
