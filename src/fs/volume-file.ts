// Reading a file of a pod's volume for env (SPEC §3, §10). An atomic-writer volume (configMap,
// secret, projected, downwardAPI, and a CSI driver's that writes the same way) is read in the
// directory its `..data` names (fs/datadir.ts: the link is read, never followed, and must name
// one `..` directory of the volume), so the visible names, which are the writer's symlinks, are
// never followed; below that, as in an emptyDir, no symlink at all, a regular file only, opened
// without blocking, at most `limit` bytes.
import fs from 'node:fs';
import { closeDataDir, openDataDirAt, type DataDir } from './datadir.ts';
import { openConfinedAt, openRootDir, readBounded, splitRelative } from './confined.ts';

/**
 * The bytes of `rel` below the volume directory `dir`, through `..data` when `viaData` and the
 * volume has one. Throws ConfinedError; `notFound` for a missing file, or a missing volume
 * directory (a CSI volume that is not mounted), which an optional reference may skip.
 */
export function readVolumeFile(dir: string, viaData: boolean, rel: string, limit: number): Buffer {
  const names = splitRelative(rel);
  const rootFd = openRootDir(dir);
  try {
    const data: DataDir | undefined = viaData ? openDataDirAt(rootFd) : undefined;
    try {
      const file = openConfinedAt(data?.fd ?? rootFd, names);
      try {
        return readBounded(file, limit);
      } finally {
        fs.closeSync(file.fd);
      }
    } finally {
      if (data) closeDataDir(data);
    }
  } finally {
    fs.closeSync(rootFd);
  }
}
