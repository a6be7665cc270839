import type { Spec } from '../oci/spec.ts';

/** A new spec with annotation `key` set to `value`; the input spec is not changed. */
export function setAnnotation(spec: Spec, key: string, value: string): Spec {
  const annotations = (spec.annotations ?? {}) as Record<string, string>;
  return { ...spec, annotations: { ...annotations, [key]: value } };
}
