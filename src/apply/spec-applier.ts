// The config.json applier (inject, the shim's create, precreate): a pure function of (spec,
// changes) that returns a new spec, or the very same object when there is nothing to change,
// so that flushSpec can skip the write of a no-op start without re-serialising. Beside the env
// it sets both marks: the digest (APPLIED_KEY) and the names of what changed (APPLIED_ENV_KEY),
// which the front's exec path applies to exec'd processes (apply/exec-env.ts). The shim's create
// also points the mounts of volumes with owners at envhook's owned copies (docs/ownership.md).
import type { Spec } from '../oci/spec.ts';
import type { JsonObject } from '../oci/json.ts';
import type { Changes } from '../plan/changes.ts';
import { appliedEnvMark } from '../plan/mark.ts';
import { APPLIED_ENV_KEY, APPLIED_KEY } from '../k8s/annotation-keys.ts';

export function applyToSpec(spec: Spec, changes: Changes): Spec {
  const copied = pointMountsAtCopies(spec, changes);
  if (changes.env === undefined || changes.mark === undefined) return copied;
  const { env, set, removed } = changes.env;
  const marked = setAnnotation(setProcessEnv(copied, env), APPLIED_KEY, changes.mark);
  return setAnnotation(marked, APPLIED_ENV_KEY, appliedEnvMark({ set: set.map((v) => v.name), removed }));
}

/**
 * Each mount of a volume read through envhook's owned copy (ownership/copy-plan.ts) with its
 * source the copy (the same path below it), every other field kept (options, ID mappings); the
 * same object when no volume is copied.
 */
function pointMountsAtCopies(spec: Spec, changes: Changes): Spec {
  const sources = new Map<unknown, string>();
  for (const p of changes.owners) for (const m of p.copy?.mounts ?? []) sources.set(m.original, m.source);
  if (sources.size === 0 || !Array.isArray(spec.mounts)) return spec;
  const mounts = spec.mounts.map((m) => {
    const source = sources.get(m);
    return source === undefined ? m : { ...(m as JsonObject), source };
  });
  return { ...spec, mounts };
}

/** A new spec whose process.env is `env`; the input spec is not changed. */
export function setProcessEnv(spec: Spec, env: readonly string[]): Spec {
  const process = (spec.process ?? {}) as JsonObject;
  return { ...spec, process: { ...process, env: [...env] } };
}

/** A new spec with annotation `key` set to `value`; the input spec is not changed. */
export function setAnnotation(spec: Spec, key: string, value: string): Spec {
  const annotations = (spec.annotations ?? {}) as Record<string, string>;
  return { ...spec, annotations: { ...annotations, [key]: value } };
}
