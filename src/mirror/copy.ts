// One owned copy from a kubelet volume, end to end: the current payload (what the kubelet's
// `..data` points at) read and checked whole (snapshot.ts), then written and swapped in
// (build.ts). Used by the resident processes after each kubelet rewrite; a container's start
// splits the two (the plan reads, the pipeline's side-effect step writes).
import { EnvhookError } from '../errors.ts';
import { closeDataDir, openDataDir } from '../fs/datadir.ts';
import type { CopyPlace } from './layout.ts';
import { writeCopy, type WrittenCopy } from './build.ts';
import { readSnapshot, releaseSnapshot, type CopyLimits, type CopyOwners, DEFAULT_LIMITS } from './snapshot.ts';

export interface CopiedVolume extends WrittenCopy {
  /** The kubelet's timestamped directory that was copied. */
  source: string;
}

/** Copies kubelet volume `kubeletDir` (the atomic writer's layout) into the copy at `place`. */
export function copyVolume(place: CopyPlace, kubeletDir: string, owners: CopyOwners, limits: CopyLimits = DEFAULT_LIMITS): CopiedVolume {
  const data = openDataDir(place.volume, kubeletDir);
  try {
    if (data.timestamped === undefined)
      throw new EnvhookError(`volume "${place.volume}": ${kubeletDir} has no ..data: not laid out by the kubelet's atomic writer`);
    const snap = readSnapshot(place.volume, data.fd, owners, limits);
    try {
      return { ...writeCopy(place, snap, data.timestamped), source: data.timestamped };
    } finally {
      releaseSnapshot(snap);
    }
  } finally {
    closeDataDir(data);
  }
}
