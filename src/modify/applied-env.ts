// The names mark: which variables an applying stage set and which service-link variables it
// removed, names only, never values. The runtime front's exec path reads it (shim/exec.ts):
// a process the runtime builds from its own stored spec (containerd, CRI-O exec) gets the same
// changes as PID 1, with the values taken from the bundle's config.json.
import type { Spec } from '../oci/spec.ts';
import { setAnnotation } from './annotation.ts';

export const APPLIED_ENV_KEY = 'envhook.io/applied-env';

export interface AppliedEnv {
  set: string[];
  removed: string[];
}

/** A new spec carrying `{"set":[…],"removed":[…]}` under APPLIED_ENV_KEY; the input is not changed. */
export function markAppliedEnv(spec: Spec, names: AppliedEnv): Spec {
  return setAnnotation(spec, APPLIED_ENV_KEY, JSON.stringify({ set: [...new Set(names.set)], removed: [...new Set(names.removed)] }));
}
