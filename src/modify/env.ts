import type { Spec } from '../oci/spec.ts';
import type { JsonObject } from '../oci/json.ts';

/** A new spec whose process.env is `env`; the input spec is not changed. */
export function setProcessEnv(spec: Spec, env: readonly string[]): Spec {
  const process = (spec.process ?? {}) as JsonObject;
  return { ...spec, process: { ...process, env: [...env] } };
}
