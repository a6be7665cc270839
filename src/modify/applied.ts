// `envhook.io/applied`: set by every stage that can change the process env (shim, precreate,
// inject), read by the createRuntime hook, which cannot (the runtime read config.json before
// hooks run) and so refuses a container whose requested env was never applied.
import type { Spec } from '../oci/spec.ts';
import { setAnnotation } from './annotation.ts';

export const APPLIED_ANNOTATION = 'envhook.io/applied';

/** A new spec marked as processed by `stage`; any value a pod author wrote is replaced. */
export function markApplied(spec: Spec, stage: string): Spec {
  return setAnnotation(spec, APPLIED_ANNOTATION, stage);
}
