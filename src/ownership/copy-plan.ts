// Whether a volume with owners is read by the container through envhook's owned copy
// (src/mirror/, docs/ownership.md) or has its files chowned in place, and if copied, the
// payload read whole and checked now (the plan reads, it writes nothing) and the container's
// mounts of the volume pointed at the copy. A copy is planned for a volume that this
// container mounts whole (or a path below it) where the entry point can point a mount
// elsewhere (NRI's mount adjustment, the shim's config.json) and envhook keeps the copy in step
// (the resident process). Left to the chown in place: a volume mounted only by subPath (the
// kubelet's bind mount of the file itself, never updated), one not laid out by the atomic
// writer (a --volume directory), and for NRI an idmapped mount (NRI's mount carries no ID
// mappings, so the replacement would lose them), which is every mount of a container in a user
// namespace (nri/wire/plain-data.ts).
import path from 'node:path';
import type { DataDir } from '../fs/datadir.ts';
import { copyDir, type CopyPlace } from '../mirror/layout.ts';
import { readSnapshot, type CopyLimits, type Snapshot } from '../mirror/snapshot.ts';
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
  if (own.length === 0) return undefined;
  if (!s.keepsIdMappings && own.some(isIdmappedMount)) return undefined;
  const place = { runDir: s.runDir, podUid: s.podUid, volume: v.volume };
  const dir = copyDir(place);
  const snapshot = readSnapshot(v.volume, v.data.fd, { defaultOwner: v.defaultOwner, items: v.items }, s.limits);
  return { place, dir, source: v.data.timestamped, snapshot, mounts: own.map((m) => copiedMount(m, v.dir, dir)) };
}

function copiedMount(m: MountLike, kubeletDir: string, dir: string): CopiedMount {
  const source = m.source as string;
  const rest = path.relative(path.resolve(kubeletDir), path.resolve(source));
  const { destination, type, options } = m as { destination?: unknown; type?: unknown; options?: unknown };
  return {
    destination: typeof destination === 'string' ? destination : '',
    source: rest === '' ? dir : path.join(dir, rest),
    type: typeof type === 'string' && type !== '' ? type : 'bind',
    options: Array.isArray(options) ? options.filter((o): o is string => typeof o === 'string') : [],
    original: m,
  };
}
