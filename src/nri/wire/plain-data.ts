// NRI's protobuf shapes → envhook's plain data: facts' NriCreateRequest (facts/nri-facts.ts) and a
// Synchronize's containers (below). The way back, apply's NriAdjustment as NRI's
// ContainerAdjustment, is reply-encoder.ts's.
import type { NriCreateRequest, NriMount, NriPod } from '../../facts/nri-facts.ts';
import type { ContainerShape, CreateContainerRequestShape, PodSandboxShape } from './descriptors.ts';

/** A container of a Synchronize: what the owner watcher and the missed-container check read. */
export interface NriSyncContainer {
  id: string;
  name: string;
  podSandboxId: string;
  /** The container's annotations as the runtime stored them (envhook's applied mark among them). */
  annotations: Record<string, string>;
  /** NRI's ContainerState number (nri-schema.ts: CONTAINER_STOPPED). */
  state: number;
  mounts: NriMount[];
  /** Its process on the host, when the runtime says (not before it starts). */
  pid?: number;
}

export function toPod(pod: PodSandboxShape | undefined): NriPod {
  return {
    id: pod?.id ?? '',
    name: pod?.name ?? '',
    namespace: pod?.namespace ?? '',
    uid: pod?.uid ?? '',
    annotations: { ...pod?.annotations },
    ...(pod?.runtimeHandler ? { runtimeHandler: pod.runtimeHandler } : {}),
  };
}

/** A Synchronize's container: ids, name, annotations, state, mounts and pid (never its env). */
export function toSyncContainer(c: ContainerShape): NriSyncContainer {
  return {
    id: c.id,
    name: c.name,
    podSandboxId: c.podSandboxId,
    annotations: { ...c.annotations },
    state: c.state,
    mounts: toMounts(c),
    ...(c.pid ? { pid: c.pid } : {}),
  };
}

/**
 * The container's mounts. A container in a user namespace (a pod with `hostUsers: false`) has
 * every mount idmapped: the kubelet gives each mount the pod's ID mappings and the runtime
 * idmaps it. NRI's Mount carries no mappings (up to 0.12), so such mounts are marked here: the
 * start then writes UIDs as is (ownership/uidmap.ts) and keeps the kubelet's mount, since a
 * replacement by NRI's adjustment would lose the mappings (ownership/copy-plan.ts).
 */
function toMounts(c: Pick<ContainerShape, 'mounts' | 'linux'> | undefined): NriMount[] {
  const idmapped = c?.linux?.namespaces.some((ns) => ns.type === 'user') === true;
  return (c?.mounts ?? []).map((m) => ({
    destination: m.destination,
    source: m.source,
    type: m.type,
    options: m.options,
    ...(idmapped ? { idmapped } : {}),
  }));
}

export function toCreateRequest(msg: CreateContainerRequestShape): NriCreateRequest {
  const c = msg.container;
  return {
    pod: toPod(msg.pod),
    container: {
      id: c?.id ?? '',
      name: c?.name ?? '',
      annotations: { ...c?.annotations },
      env: c?.env ?? [],
      mounts: toMounts(c),
      // NRI's Container carries no user-namespace mappings (a user namespace marks the mounts idmapped: toMounts).
      uidMappings: undefined,
    },
  };
}
