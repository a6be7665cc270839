// The volumes a running pod asks owners for, found as a container start finds them but without
// one: the resident NRI daemon calls this for the pods of a Synchronize and after each
// CreateContainer. The annotation is read and checked as at the start (ownership/annotation.ts),
// each volume is looked up under the pod directory (k8s/volumes.ts: configMap, secret, projected
// or downwardAPI only) and its UIDs reach the disk as the mounts say (ownership/uidmap.ts).
// A volume that cannot be watched is skipped with its reason, never an error for the pod.
import { describeError } from '../errors.ts';
import type { Annotations } from '../k8s/identity.ts';
import { findVolume } from '../k8s/volumes.ts';
import { readVolumeOwners } from '../ownership/annotation.ts';
import { volumeTranslation, type MountFacts } from '../ownership/uidmap.ts';
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
export function podWatchVolumes(podDir: string, annotations: Annotations, mounts: MountFacts): PodVolumes {
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
    const uidMapping = volumeTranslation(mounts, dir);
    if (uidMapping === 'mixed') {
      out.skipped.push({ volume: owners.volume, reason: `volume "${owners.volume}" is mounted both idmapped and not idmapped` });
      continue;
    }
    out.volumes.push({ dir, owners, uidMapping });
  }
  return out;
}
