// Who this container is, from the annotations the runtime (CRI-O or containerd) put in the spec.
// These are runtime-made, unlike envhook.io/* which the pod author writes.

const CONTAINER_NAME_KEYS = ['io.kubernetes.container.name', 'io.kubernetes.cri.container-name'] as const;
const POD_UID_KEYS = ['io.kubernetes.pod.uid', 'io.kubernetes.cri.sandbox-uid'] as const;
/** A sandbox's annotation and its value (also the front's pattern: scripts/front-tables.ts). */
export const SANDBOX_KEYS: Record<string, string> = {
  'io.kubernetes.cri.container-type': 'sandbox',
  'io.kubernetes.cri-o.ContainerType': 'sandbox',
};

export type Annotations = Record<string, string>;

export function containerName(annotations: Annotations): string | undefined {
  for (const key of CONTAINER_NAME_KEYS) {
    const v = annotations[key];
    if (v) return v;
  }
  return undefined;
}

export function podUidAnnotation(annotations: Annotations): string | undefined {
  for (const key of POD_UID_KEYS) {
    const v = annotations[key];
    if (v) return v;
  }
  return undefined;
}

export function isSandbox(annotations: Annotations): boolean {
  return Object.entries(SANDBOX_KEYS).some(([k, v]) => annotations[k] === v);
}
