// Facts from an NRI CreateContainer request (docs/design.md#nri-mode). NRI passes every pod annotation; the
// container name and the pod UID are the runtime's own fields, trusted over any annotation, and
// the pod directory is `<kubeletRoot>/pods/<uid>`. Pure: no file is touched here.
import { isSandbox } from '../k8s/identity.ts';
import type { Facts } from './facts.ts';

// NRI's CreateContainer request as plain data: the NRI session (nri/worker/plugin.ts) makes it from the
// protobuf message, and it is all the facts read of it.
export interface NriMount {
  destination: string;
  source: string;
  type: string;
  options: string[];
  /** Idmapped by the runtime though NRI cannot say so: the container has a user namespace (nri/wire/plain-data.ts). */
  idmapped?: boolean;
}

interface NriIdMapping {
  containerId: number;
  hostId: number;
  size: number;
}

/** A pod sandbox as NRI describes it (CreateContainer, Synchronize, pod events). */
export interface NriPod {
  /** The sandbox's id: a pod whose sandbox is replaced keeps its UID and gets a new id. */
  id: string;
  name: string;
  namespace: string;
  /** The pod's UID as the runtime knows it (trusted: NRI's own field). */
  uid: string;
  /** Every pod annotation (NRI passes them all). */
  annotations: Record<string, string>;
  /** The CRI runtime handler the pod runs under ('' for the runtime's default). */
  runtimeHandler?: string | undefined;
}

export interface NriCreateRequest {
  pod: NriPod;
  container: {
    id: string;
    /** The container's name in the pod (trusted: NRI's own field). */
    name: string;
    annotations: Record<string, string>;
    /** The process env the runtime built, `NAME=value` entries in order. */
    env: string[];
    mounts: NriMount[];
    /** The container's user-namespace UID mappings, when it has one. */
    uidMappings?: NriIdMapping[] | undefined;
  };
}

const NO_VOLUMES: ReadonlyMap<string, string> = new Map();

export function factsFromNri(request: NriCreateRequest): Facts {
  const { pod, container } = request;
  const mappings = container.uidMappings ?? [];
  return {
    annotations: pod.annotations,
    container: container.name,
    sandbox: isSandbox(container.annotations),
    env: container.env,
    mounts: container.mounts,
    uidMappings: mappings.length > 0 ? mappings.map((m) => ({ containerID: m.containerId, hostID: m.hostId, size: m.size })) : undefined,
    pod: { from: 'uid', uid: pod.uid },
    volumes: NO_VOLUMES,
  };
}
