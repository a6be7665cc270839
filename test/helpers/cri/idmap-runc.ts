// A runc that makes idmapped mounts (runc ≥ 1.2, whose `runc features` lists
// mountExtensions.idmap): containerd 2.x refuses to start a container whose mounts carry ID
// mappings (a pod in a user namespace: the kubelet maps every mount) on a runc without them.
// The machine's runc when it has them, else $ENVHOOK_IDMAP_RUNC (CONTRIBUTING.md says how to
// get one on a system whose runc is older).
import { spawnSync } from 'node:child_process';
import { RUNC } from '../bundle.ts';

function makesIdmappedMounts(runc: string): boolean {
  const r = spawnSync(runc, ['features'], { encoding: 'utf8', timeout: 10_000 });
  if (r.status !== 0) return false;
  try {
    return (
      (JSON.parse(r.stdout) as { linux?: { mountExtensions?: { idmap?: { enabled?: boolean } } } }).linux?.mountExtensions?.idmap
        ?.enabled === true
    );
  } catch {
    return false;
  }
}

/** The runc to use for pods in a user namespace, or why there is none (a skip message). */
export function idmapRunc(): { runc: string } | { skip: string } {
  if (RUNC && makesIdmappedMounts(RUNC)) return { runc: RUNC };
  const own = process.env.ENVHOOK_IDMAP_RUNC;
  if (own && makesIdmappedMounts(own)) return { runc: own };
  return {
    skip: `no runc that makes idmapped mounts (runc ≥ 1.2): ${RUNC ?? 'runc'} has none${own ? `, nor ENVHOOK_IDMAP_RUNC=${own}` : '; set ENVHOOK_IDMAP_RUNC to one'}`,
  };
}
