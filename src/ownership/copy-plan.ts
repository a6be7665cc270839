// Whether a volume with owners is read by the container through envhook's owned copy
// (src/mirror/, docs/ownership.md) or has its files chowned in place, and if copied, the
// payload read whole and checked now (the plan reads, it writes nothing) and the container's
// mounts of the volume pointed at the copy. A copy is planned for a volume that this
// container mounts whole, a path below it, or by subPath (the kubelet's bind mount under
// `volume-subpaths/`, pointed at the same entry of the copy's `..data` as the container starts:
// like the kubelet's, never updated after), where the entry point can point a mount elsewhere
// (NRI's mount adjustment, the shim's config.json) and envhook keeps the copy in step (the
// resident process). Left to the chown in place: a volume this container does not mount, one
// not laid out by the atomic writer (a --volume directory), and for NRI an idmapped mount
// (NRI's mount carries no ID mappings, so the replacement would lose them).
import fs from 'node:fs';
import path from 'node:path';
import { DATA_LINK, type DataDir } from '../fs/datadir.ts';
import { copyDir, type CopyPlace } from '../mirror/layout.ts';
import { readSnapshot, releaseSnapshot, type CopyLimits, type Snapshot } from '../mirror/snapshot.ts';
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
  snapshot: Snapshot;
  mounts: CopiedMount[];
}

interface CopyInput {
  volume: string;
  /** The kubelet's volume directory. */
  dir: string;
  data: DataDir;
  defaultOwner: Owner | undefined;
  items: ReadonlyMap<string, Owner>;
}

/** The copy of one prepared volume, or undefined for the chown in place. Throws the snapshot's EnvhookError. */
export function planCopy(v: CopyInput, mounts: readonly MountLike[], s: CopySettings | undefined): PlannedCopy | undefined {
  if (s === undefined || s.podUid === undefined || v.data.timestamped === undefined) return undefined;
  const own = mountsOf(mounts, v.dir);
  const subPaths = mountsOf(mounts, subPathsDir(v.dir, v.volume));
  if (own.length + subPaths.length === 0) return undefined;
  if (!s.keepsIdMappings && [...own, ...subPaths].some(isIdmappedMount)) return undefined;
  const place = { runDir: s.runDir, podUid: s.podUid, volume: v.volume };
  const dir = copyDir(place);
  const snapshot = readSnapshot(v.volume, v.data.fd, { defaultOwner: v.defaultOwner, items: v.items }, s.limits);
  const copied = own.map((m) => copiedMount(m, path.relative(path.resolve(v.dir), path.resolve(m.source as string)), dir));
  for (const m of subPaths) {
    const rel = subPathEntry(m, snapshot);
    if (rel !== undefined) copied.push(copiedMount(m, path.join(DATA_LINK, rel), dir));
  }
  if (copied.length === 0) {
    releaseSnapshot(snapshot);
    return undefined;
  }
  return { place, dir, source: v.data.timestamped, snapshot, mounts: copied };
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
 * The payload entry a subPath mount shows (the same inode), or undefined: one bound from an
 * earlier payload (a restarted container's) stays the kubelet's, as it was.
 */
function subPathEntry(m: MountLike, snap: Snapshot): string | undefined {
  let st: fs.Stats;
  try {
    st = fs.statSync(m.source as string);
  } catch {
    return undefined;
  }
  if (st.dev !== snap.dev) return undefined;
  return snap.entries.find((e) => e.ino === st.ino && (e.kind === 'dir') === st.isDirectory())?.rel;
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
