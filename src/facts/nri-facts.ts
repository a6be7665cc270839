// Facts from an NRI CreateContainer request (SPEC §9). NRI passes every pod annotation; the
// container name and the pod UID are the runtime's own fields, trusted over any annotation, and
// the pod directory is `<kubeletRoot>/pods/<uid>`. Pure: no file is touched here.
import { isSandbox } from '../k8s/identity.ts';
import type { NriCreateRequest } from '../nri/types.ts';
import type { Facts } from './facts.ts';

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
