// Facts from a config.json (inject, the runtime shim's create, precreate, the hook): the
// container's identity from the runtime's annotations, or --container for a plain bundle.
import type { Spec } from '../oci/spec.ts';
import { containerName, isSandbox, type Annotations } from '../k8s/identity.ts';
import { userNamespaceMappings, type MountLike } from '../ownership/uidmap.ts';
import type { Facts } from './facts.ts';

export interface SpecFactOptions {
  /** --container: the name of a container whose config.json has no Kubernetes annotations. */
  container?: string | undefined;
  /** --pod-dir: the admin names the pod directory. */
  podDir?: string | undefined;
  /** --volume NAME=DIR. */
  volumes?: ReadonlyMap<string, string> | undefined;
}

const NO_VOLUMES: ReadonlyMap<string, string> = new Map();

export function factsFromSpec(spec: Spec, options: SpecFactOptions = {}): Facts {
  const annotations = (spec.annotations ?? {}) as Annotations;
  return {
    annotations,
    container: containerName(annotations) ?? options.container,
    sandbox: isSandbox(annotations),
    env: ((spec.process as { env?: string[] } | undefined)?.env ?? []) as string[],
    mounts: Array.isArray(spec.mounts) ? (spec.mounts as MountLike[]) : [],
    uidMappings: userNamespaceMappings(spec),
    pod: options.podDir ? { from: 'flag', dir: options.podDir } : { from: 'mounts' },
    volumes: options.volumes ?? NO_VOLUMES,
  };
}
