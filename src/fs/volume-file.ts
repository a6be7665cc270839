// Reading a file of a pod's volume for env (docs/design.md#finding-volumes, #env-from-other-volumes). An atomic-writer volume (configMap,
// secret, projected, downwardAPI, and a CSI driver's that writes the same way) is read in the
// directory its `..data` names (fs/datadir.ts: the link is read, never followed, and must name
// one `..` directory of the volume), so the visible names, which are the writer's symlinks, are
// never followed; below that, as in an emptyDir, no symlink at all, a regular file only, opened
// without blocking, at most `limit` bytes.
import fs from 'node:fs';
import { closeDataDir, openDataDirAt, type DataDir } from './datadir.ts';
import { listBounded } from './bounded-dir.ts';
import {
  ConfinedError,
  fdPath,
  openConfinedUnless,
  openDirPathAt,
  openFileAt,
  openRootDir,
  readBounded,
  splitRelative,
  type OpenedFile,
} from './confined.ts';

/**
 * The bytes of `rel` below the volume directory `dir`, through `..data` when `viaData` and the
 * volume has one. Throws ConfinedError; `notFound` for a missing file, or a missing volume
 * directory (a CSI volume that is not mounted), which an optional reference may skip.
 */
export function readVolumeFile(dir: string, viaData: boolean, rel: string, limit: number): Buffer {
  let volume: OpenVolume | undefined;
  try {
    return readHeldVolumeFileUnless(
      () => (volume = openVolume(dir, viaData)),
      rel,
      limit,
      () => false,
    )!;
  } finally {
    if (volume) closeVolume(volume);
  }
}

/**
 * A volume directory held open for the reads of one start (the env reader's): each read opens no
 * directory but `..data`'s, which is read at each read, never held: the kubelet's writer removes
 * the payload it replaced, so a held one could lose its files in the middle of a start.
 */
export interface OpenVolume {
  rootFd: number;
  viaData: boolean;
}

/** Opens the volume directory `dir`; ConfinedError as readVolumeFile. */
export function openVolume(dir: string, viaData: boolean): OpenVolume {
  return { rootFd: openRootDir(dir), viaData };
}

export function closeVolume(v: OpenVolume): void {
  fs.closeSync(v.rootFd);
}

/**
 * readVolumeFile in a volume the caller holds (`volume()` gives it, opening it at its first
 * call), except that `known` is asked with the file's stat once it is reached, checked, and
 * before it is read: when it answers true (the caller holds what this very file, unchanged,
 * gave it before), nothing is read and undefined is returned. The path is checked first.
 */
export function readHeldVolumeFileUnless(
  volume: () => OpenVolume,
  rel: string,
  limit: number,
  known: (checked: fs.Stats) => boolean,
): Buffer | undefined {
  const names = splitRelative(rel);
  const { rootFd, viaData } = volume();
  const data: DataDir | undefined = viaData ? openDataDirAt(rootFd) : undefined;
  try {
    const file = openConfinedUnless(data?.fd ?? rootFd, names, known);
    if (file === undefined) return undefined;
    try {
      return readBounded(file, limit);
    } finally {
      fs.closeSync(file.fd);
    }
  } finally {
    if (data) closeDataDir(data);
  }
}

export interface DirLimits {
  /** Bytes of one file. */
  limit: number;
  /** Bytes of all files together. */
  totalLimit: number;
  /** Names in the directory. */
  maxEntries: number;
  wanted: (name: Buffer) => boolean;
}

/** A regular file of a volume directory and its bytes (the caller zeroes them). */
interface DirFile {
  name: string;
  bytes: Buffer;
}

export interface DirFiles {
  files: DirFile[];
  /** Names `wanted` refused (decoded for reporting only): never opened. */
  skipped: string[];
}

/**
 * Every regular file directly in directory `rel` (the volume's top when undefined) of the volume,
 * read (at most `limit` bytes each), in byte order of their names. Subdirectories are passed
 * over (a directory is not a value), and so are the `..` names the atomic writer reserves, in a
 * volume read without `..data`. A name `wanted` refuses is listed in `skipped` and never opened;
 * `wanted` must refuse every name that is not ASCII (a name is bytes on Linux, and only an ASCII
 * one survives being a string unchanged). A wanted name that is not a regular file (a symlink,
 * FIFO, device, socket) is refused as a named file is: EntryError, naming it. At most
 * `maxEntries` names in the directory and `totalLimit` bytes read (the resident plugin must not
 * hold 1024 files of 64 KiB for one start). ConfinedError `notFound` when the directory is missing.
 */
export function readVolumeDir(dir: string, viaData: boolean, rel: string | undefined, opts: DirLimits): DirFiles {
  const names = rel === undefined ? [] : splitRelative(rel);
  const rootFd = openRootDir(dir);
  const out: DirFiles = { files: [], skipped: [] };
  try {
    const data: DataDir | undefined = viaData ? openDataDirAt(rootFd) : undefined;
    try {
      const dirFd = openDirPathAt(data?.fd ?? rootFd, names);
      try {
        readEntries(dirFd, !data?.timestamped, opts, out);
        return out;
      } finally {
        fs.closeSync(dirFd);
      }
    } finally {
      if (data) closeDataDir(data);
    }
  } catch (err) {
    for (const f of out.files) f.bytes.fill(0);
    throw err;
  } finally {
    fs.closeSync(rootFd);
  }
}

function readEntries(dirFd: number, plain: boolean, opts: DirLimits, out: DirFiles): void {
  // Read one at a time and no further than the limit: the pod decides how many there are.
  const entries = listBounded(fdPath(dirFd, '.'), opts.maxEntries);
  entries.sort((a, b) => Buffer.compare(a.name, b.name));
  let total = 0;
  for (const e of entries) {
    if (e.isDirectory() || (plain && e.name[0] === 0x2e && e.name[1] === 0x2e)) continue;
    if (!opts.wanted(e.name)) {
      out.skipped.push(e.name.toString('utf8'));
      continue;
    }
    const name = e.name.toString('latin1');
    let file: OpenedFile | undefined;
    try {
      file = openFileAt(dirFd, name);
      const bytes = readBounded(file, opts.limit);
      out.files.push({ name, bytes });
      total += bytes.length;
    } catch (err) {
      if (err instanceof ConfinedError) throw new EntryError(err, name);
      throw err;
    } finally {
      if (file) fs.closeSync(file.fd);
    }
    if (total > opts.totalLimit) throw new ConfinedError(`has files larger than ${opts.totalLimit} bytes together`);
  }
}

/** A wanted file of a directory that was refused: `entry` names it. */
export class EntryError extends ConfinedError {
  readonly entry: string;
  constructor(err: ConfinedError, entry: string) {
    super(err.reason, err.code, err);
    this.entry = entry;
  }
}
