// NRI CreateContainer requests for a container of a kubelet-like pod (scripts/kubelet-pod.ts), as
// the protocol layer hands them to the handler: the pod's annotations (NRI passes every one),
// NRI's own container name and pod UID, the process env and the mounts the runtime built.
import type { NriCreateRequest, NriMount } from '../../../src/facts/nri-facts.ts';
import type { NriAdjustment } from '../../../src/apply/nri-adjustment.ts';
import type { Pod } from '../../../scripts/kubelet-pod.ts';

export interface NriRequestOptions {
  annotations?: Record<string, string>;
  env?: string[];
  mounts?: NriMount[];
  uidMappings?: { containerId: number; hostId: number; size: number }[];
  containerAnnotations?: Record<string, string>;
}

export function nriRequest(pod: Pod, container: string, o: NriRequestOptions = {}): NriCreateRequest {
  return {
    pod: { id: `sandbox-${pod.uid.slice(0, 8)}`, name: 'web', namespace: 'default', uid: pod.uid, annotations: o.annotations ?? {} },
    container: {
      id: `ctr-${container}`,
      name: container,
      annotations: o.containerAnnotations ?? pod.annotations(container),
      env: o.env ?? ['PATH=/bin', 'HOME=/'],
      mounts: o.mounts ?? pod.mounts(container),
      uidMappings: o.uidMappings,
    },
  };
}

/**
 * The process env after the runtime applies `adj` as containerd 2.1 with NRI 0.8.0 does: a
 * variable the container has is replaced in place (one entry left), a new one appended; a
 * removal is applied only when `removals` (NRI 0.8.0 drops them: see src/apply/nri-adjustment.ts).
 */
export function applyAdjustment(env: readonly string[], adj: NriAdjustment, removals = false): string[] {
  const out = env.map((e) => [e.slice(0, Math.max(e.indexOf('='), 0)) || e, e] as [string, string]);
  const drop = new Set(removals ? adj.removeEnv : []);
  let kept = out.filter(([name]) => !drop.has(name));
  for (const { key, value } of adj.env) {
    const at = kept.findIndex(([name]) => name === key);
    if (at < 0) kept.push([key, `${key}=${value}`]);
    else {
      kept[at] = [key, `${key}=${value}`];
      kept = kept.filter(([name], i) => name !== key || i === at);
    }
  }
  return kept.map(([, e]) => e);
}
