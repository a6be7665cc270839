// The config.json applier (inject, the shim's create, precreate): a pure function of (spec,
// changes) that returns a new spec, or the very same object when there is nothing to change,
// so that flushSpec can skip the write of a no-op start without re-serialising. Beside the env
// it sets both marks: the digest (APPLIED_KEY) and the names of what changed (APPLIED_ENV_KEY),
// which the front's exec path applies to exec'd processes (apply/exec-env.ts).
import type { Spec } from '../oci/spec.ts';
import type { JsonObject } from '../oci/json.ts';
import type { Changes } from '../plan/changes.ts';
import { appliedEnvMark } from '../plan/mark.ts';
import { APPLIED_ENV_KEY, APPLIED_KEY } from '../k8s/annotation-keys.ts';

export function applyToSpec(spec: Spec, changes: Changes): Spec {
  if (changes.env === undefined || changes.mark === undefined) return spec;
  const { env, set, removed } = changes.env;
  const marked = setAnnotation(setProcessEnv(spec, env), APPLIED_KEY, changes.mark);
  return setAnnotation(marked, APPLIED_ENV_KEY, appliedEnvMark({ set: set.map((v) => v.name), removed }));
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
