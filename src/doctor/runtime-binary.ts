// The runtime's own binary, to ask for its version and its reading of the configuration: the one
// named with --containerd / --crio (run on this machine), else the node's under --root, found and
// run as install finds and runs it (src/oci/runtime-binary.ts); or why there is none (then the
// checks that need it are skipped, never passed).
import { EnvhookError } from '../errors.ts';
import { findContainerd, type ContainerdBinary } from '../install/containerd/containerd-binary.ts';
import { findCrio } from '../install/crio/crio-check.ts';
import type { Runtime } from '../install/layout.ts';
import { findNodeBinary, missingBinary, NamedBinaryError, versionMatch, type RuntimeBinary } from '../oci/runtime-binary.ts';
import type { NodeView } from './node.ts';

export type NodeRuntime =
  | { runtime: Runtime; bin: RuntimeBinary; version: string; containerd?: ContainerdBinary }
  /** `todo`: what to do, where a flag named a binary that is not the runtime (the flag named in `missing`). */
  | { runtime: Runtime; missing: string; todo?: string };

const found = new WeakMap<NodeView, Map<Runtime, NodeRuntime>>();

export function runtimeBinary(node: NodeView, runtime: Runtime): NodeRuntime {
  let byRuntime = found.get(node);
  if (!byRuntime) found.set(node, (byRuntime = new Map()));
  let b = byRuntime.get(runtime);
  if (!b) byRuntime.set(runtime, (b = lookup(node, runtime)));
  return b;
}

function lookup(node: NodeView, runtime: Runtime): NodeRuntime {
  const explicit = runtime === 'containerd' ? node.binaries.containerd : runtime === 'crio' ? node.binaries.crio : undefined;
  try {
    if (runtime === 'containerd') {
      const c = findContainerd(explicit, node.root);
      return c ? { runtime, bin: c, version: c.version, containerd: c } : { runtime, missing: missingBinary(runtime, node.root) };
    }
    if (runtime === 'crio') {
      const c = findCrio(explicit, node.root);
      return c ? { runtime, bin: c, version: c.version } : { runtime, missing: missingBinary(runtime, node.root) };
    }
    const bin = findNodeBinary(runtime, explicit, node.root);
    if (!bin) return { runtime, missing: missingBinary(runtime, node.root) };
    return { runtime, bin, version: versionMatch(bin, 'Podman', /podman version (\S+)/)[1]! };
  } catch (err) {
    if (err instanceof NamedBinaryError) return { runtime, missing: err.fault, todo: err.todo };
    if (err instanceof EnvhookError) return { runtime, missing: err.message };
    throw err;
  }
}
