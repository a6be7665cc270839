// The runtime's own binary, to ask for its version and its reading of the configuration, found as
// install finds it; or why there is none (then the checks that need it are skipped, never passed).
import { EnvhookError } from '../errors.ts';
import { findContainerd, type ContainerdBinary } from '../install/containerd/containerd-binary.ts';
import { crioVersion } from '../install/crio/crio-check.ts';
import type { Runtime } from '../install/layout.ts';
import { onPath, versionMatch } from '../install/which.ts';
import type { NodeView } from './node.ts';

export type RuntimeBinary =
  { runtime: Runtime; path: string; version: string; containerd?: ContainerdBinary } | { runtime: Runtime; missing: string };

const found = new WeakMap<NodeView, Map<Runtime, RuntimeBinary>>();

export function runtimeBinary(node: NodeView, runtime: Runtime): RuntimeBinary {
  let byRuntime = found.get(node);
  if (!byRuntime) found.set(node, (byRuntime = new Map()));
  let b = byRuntime.get(runtime);
  if (!b) byRuntime.set(runtime, (b = lookup(runtime)));
  return b;
}

function lookup(runtime: Runtime): RuntimeBinary {
  try {
    if (runtime === 'containerd') {
      const c = findContainerd(undefined);
      return c ? { runtime, path: c.path, version: c.version, containerd: c } : { runtime, missing: 'no containerd on PATH' };
    }
    const bin = onPath(runtime);
    if (!bin) return { runtime, missing: `no ${runtime} on PATH` };
    const version = runtime === 'crio' ? crioVersion(bin) : versionMatch(bin, 'Podman', /podman version (\S+)/)[1]!;
    return { runtime, path: bin, version };
  } catch (err) {
    if (err instanceof EnvhookError) return { runtime, missing: err.message };
    throw err;
  }
}
