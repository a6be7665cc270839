// The volumes a running pod asks owners for, found as a container start finds them but without
// one: the resident NRI daemon calls this for the pods of a Synchronize and after each
// CreateContainer. The annotation is read and checked as at the start (ownership/annotation.ts),
// each volume is looked up under the pod directory (k8s/volumes.ts: configMap, secret, projected
// or downwardAPI only) and its UIDs reach the disk as the mounts say (ownership/uidmap.ts).
// A volume that cannot be watched is skipped with its reason, never an error for the pod.
// A volume some container reads through envhook's owned copy (a mount whose source is the copy,
// mirror/layout.ts) is watched to be copied after each rewrite; one some container mounts
// straight from the kubelet (a container created before owned copies, an idmapped mount under
// NRI, or no copies at all) is watched to be chowned in place; a volume can be both.
import { describeError } from '../errors.ts';
import type { Annotations } from '../k8s/identity.ts';
import { findVolume } from '../k8s/volumes.ts';
import { readVolumeOwners } from '../ownership/annotation.ts';
import { mountsOf, volumeTranslation, type MountFacts } from '../ownership/uidmap.ts';
import { copyDir, type CopyPlace } from '../mirror/layout.ts';
import type { WatchVolume } from './registry.ts';

interface SkippedVolume {
  volume: string;
  /** envhook's message: why it is not watched (names and paths only). */
  reason: string;
}

export interface PodVolumes {
  volumes: WatchVolume[];
  skipped: SkippedVolume[];
}

/**
 * The pod's owner volumes under `podDir` (`<kubeletRoot>/pods/<uid>`, already checked). Throws
 * the start's EnvhookError when the annotation itself is bad; no annotation: no volumes.
 */
export function podWatchVolumes(
  podDir: string,
  annotations: Annotations,
  mounts: MountFacts,
  copies?: { runDir: string; podUid: string },
): PodVolumes {
  const out: PodVolumes = { volumes: [], skipped: [] };
  const entries = readVolumeOwners(annotations) ?? [];
  const pod = { dir: podDir, uid: undefined, from: 'uid' as const };
  for (const owners of entries) {
    let dir: string;
    try {
      dir = findVolume({ pod, overrides: new Map() }, owners.volume, 'atomic');
    } catch (err) {
      out.skipped.push({ volume: owners.volume, reason: describeError(err) });
      continue;
    }
    const copy = copies && copyOf(copies, owners.volume, mounts);
    if (copy?.mapping === 'mixed') skip(owners.volume, out);
    else if (copy) out.volumes.push({ dir, owners, uidMapping: copy.mapping, copy: copy.place });
    // Mounted straight from the kubelet by some container: chowned in place, as at its start. Where
    // copies are made, a volume no container mounts is left alone (ownership/copy-plan.ts); without
    // copies it is chowned in place, as at its start.
    if (copies && mountsOf(mounts.mounts, dir).length === 0) continue;
    const uidMapping = volumeTranslation(mounts, dir);
    if (uidMapping === 'mixed') {
      out.skipped.push({ volume: owners.volume, reason: `volume "${owners.volume}" is mounted both idmapped and not idmapped` });
      continue;
    }
    out.volumes.push({ dir, owners, uidMapping });
  }
  return out;
}

/** The volume's owned copy, when some mount's source is it: its place and how its UIDs reach the disk. */
function copyOf(copies: { runDir: string; podUid: string }, volume: string, mounts: MountFacts) {
  const place: CopyPlace = { ...copies, volume };
  let dir: string;
  try {
    dir = copyDir(place);
  } catch {
    return undefined;
  }
  const own = mountsOf(mounts.mounts, dir);
  if (own.length === 0) return undefined;
  return { place, mapping: volumeTranslation({ mounts: own, uidMappings: mounts.uidMappings }, dir) };
}

function skip(volume: string, out: PodVolumes): void {
  out.skipped.push({ volume, reason: `volume "${volume}" is mounted both idmapped and not idmapped` });
}
