// Whether a volume with owners is read by the container through envhook's owned copy
// (src/mirror/, docs/ownership.md), has its files chowned in place, or is left alone, and if
// copied, the container's mounts of the volume pointed at the copy. The plan does not read the
// payload (a pod chooses its size): the copy job does (mirror/copy.ts), by the copier (in slices
// of the NRI worker's loop), and finds the entries the subPath mounts show. A copy is planned for a volume that this
// container mounts whole, a path below it, or by subPath (the kubelet's bind mount under
// `volume-subpaths/`, pointed at the same entry of the copy's `..data` as the container starts:
// like the kubelet's, never updated after), where the entry point can point a mount elsewhere
// (NRI's mount adjustment, the shim's config.json) and envhook keeps the copy in step (the
// resident process). Left alone: a volume this container does not mount (it reads none of its
// files; the container that mounts it gets its copy at its own start). Left to the chown in
// place: one not laid out by the atomic writer (a --volume directory), and for NRI an idmapped
// mount (NRI's mount carries no ID mappings, so the replacement would lose them).
import fs from 'node:fs';
import path from 'node:path';
import { DATA_LINK, type DataDir } from '../fs/datadir.ts';
import { copyDir, type CopyPlace } from '../mirror/layout.ts';
import type { CopyLimits, WantedEntry } from '../mirror/snapshot.ts';
import { isIdmappedMount, mountsOf, type MountLike } from './uidmap.ts';
import type { Owner } from './walk.ts';

export interface CopySettings {
  /** The run directory the copies live under (`<runDir>/volumes/…`). */
  runDir: string;
  /** The pod's UID (a trusted one: NRI's field, or the kubelet-made mount sources). */
  podUid: string | undefined;
  /** The entry point can keep a mount's ID mappings (config.json) or not (NRI). */
  keepsIdMappings: boolean;
  limits?: CopyLimits | undefined;
}

/** A container mount of the volume, pointed at the copy. */
export interface CopiedMount {
  destination: string;
  /** The copy's directory, or the same path below it as the kubelet's source. */
  source: string;
  type: string;
  options: string[];
  /** The mount as the runtime gave it (the shim keeps its other fields). */
  original: MountLike;
}

export interface PlannedCopy {
  place: CopyPlace;
  dir: string;
  /** The kubelet's timestamped directory read (the copy's own takes its name when free: mirror/build.ts). */
  source: string;
  limits: CopyLimits | undefined;
  /** The mounts of the whole volume or a path below it; the subPath mounts join them once the copy has found their entries. */
  mounts: CopiedMount[];
  /** The subPath mounts of the volume (bind mounts of payload entries), each with the entry it shows. */
  subPaths: { mount: MountLike; want: WantedEntry }[];
}

/** The container mounts nothing of the volume: no copy, no chown (it reads none of its files). */
export const NOT_MOUNTED = 'not-mounted';

interface CopyInput {
  volume: string;
  /** The kubelet's volume directory. */
  dir: string;
  data: DataDir;
  defaultOwner: Owner | undefined;
  items: ReadonlyMap<string, Owner>;
}

/** The copy of one prepared volume, NOT_MOUNTED, or undefined for the chown in place. */
export function planCopy(
  v: CopyInput,
  mounts: readonly MountLike[],
  s: CopySettings | undefined,
): PlannedCopy | typeof NOT_MOUNTED | undefined {
  if (s === undefined || s.podUid === undefined || v.data.timestamped === undefined) return undefined;
  const own = mountsOf(mounts, v.dir);
  const subPaths = mountsOf(mounts, subPathsDir(v.dir, v.volume));
  if (own.length + subPaths.length === 0) return NOT_MOUNTED;
  if (!s.keepsIdMappings && [...own, ...subPaths].some(isIdmappedMount)) return undefined;
  const place = { runDir: s.runDir, podUid: s.podUid, volume: v.volume };
  const dir = copyDir(place);
  const copied = own.map((m) => copiedMount(m, path.relative(path.resolve(v.dir), path.resolve(m.source as string)), dir));
  const wanted = subPaths.flatMap((m) => {
    const want = subPathEntry(m, v.data.dev);
    return want === undefined ? [] : [{ mount: m, want }];
  });
  // Only subPaths bound from an earlier payload: the container reads the kubelet's files there.
  if (copied.length + wanted.length === 0) return undefined;
  return { place, dir, source: v.data.timestamped, limits: s.limits, mounts: copied, subPaths: wanted };
}

/** The subPath mounts whose entries the copy found, pointed at the same entry of the copy's `..data` (`found`: the job's answer). */
export function addSubPathMounts(copy: PlannedCopy, found: readonly (string | undefined)[]): void {
  copy.subPaths.forEach((s, i) => {
    const rel = found[i];
    if (rel !== undefined) copy.mounts.push(copiedMount(s.mount, path.join(DATA_LINK, rel), copy.dir));
  });
}

/**
 * `<pod dir>/volume-subpaths/<volume>/`: where the kubelet bind-mounts each subPath of the volume
 * (`<container>/<mount index>`), a bind mount of the file or directory the subPath resolved to in
 * the kubelet's timestamped directory at the container's start; the kubelet never updates it.
 */
function subPathsDir(kubeletDir: string, volume: string): string {
  return path.join(path.dirname(path.dirname(path.dirname(kubeletDir))), 'volume-subpaths', volume);
}

/**
 * The inode a subPath mount shows, if it is on the payload's file system (the copy job finds it
 * in the payload; one bound from an earlier payload, a restarted container's, stays the kubelet's).
 */
function subPathEntry(m: MountLike, dev: number): WantedEntry | undefined {
  let st: fs.Stats;
  try {
    st = fs.statSync(m.source as string);
  } catch {
    return undefined;
  }
  return st.dev === dev ? { ino: st.ino, dir: st.isDirectory() } : undefined;
}

/** `m` with its source `rest` below the copy (the copy itself for ''). */
function copiedMount(m: MountLike, rest: string, dir: string): CopiedMount {
  const { destination, type, options } = m as { destination?: unknown; type?: unknown; options?: unknown };
  return {
    destination: typeof destination === 'string' ? destination : '',
    source: rest === '' ? dir : path.join(dir, rest),
    type: typeof type === 'string' && type !== '' ? type : 'bind',
    options: Array.isArray(options) ? options.filter((o): o is string => typeof o === 'string') : [],
    original: m,
  };
}
