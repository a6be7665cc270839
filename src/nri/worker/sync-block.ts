// Whether a runtime can add a container to its store after a new plugin's Synchronize although
// the container's CreateContainer went to the plugins before it (NRI fails open when the one it
// went to was gone). containerd holds plugin syncs back while it creates a container (NRI's
// BlockPluginSync) from 1.7.26 in the 1.7 line and from 2.0.3; older containerd and CRI-O (no
// release uses it) do not, and there a container can be in no Synchronize and have had no
// envhook: envhook then also subscribes to PostCreateContainer to find it (plugin.ts). A runtime
// it does not know is treated as one without the block.

const BLOCKS_FROM: ReadonlyArray<readonly [number, number, number]> = [
  [1, 7, 26],
  [2, 0, 3],
];

/** The leading x.y.z of a runtime's version (`2.1.9+unknown`, `1.7.24~ds1`, `v2.2.7`), or undefined. */
function release(version: string): [number, number, number] | undefined {
  const m = /^v?(\d+)\.(\d+)\.(\d+)/.exec(version);
  return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : undefined;
}

/** True when the runtime (Configure's name and version) may list a container envhook never saw in no Synchronize. */
export function needsPostCreateCheck(runtimeName: string, runtimeVersion: string): boolean {
  if (runtimeName !== 'containerd') return true;
  const v = release(runtimeVersion);
  if (!v) return true;
  const [major, minor, patch] = v;
  if (major > 2 || (major === 2 && minor >= 1)) return false;
  const from = BLOCKS_FROM.find(([a, b]) => a === major && b === minor);
  return from === undefined || patch < from[2];
}
