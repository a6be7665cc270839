// Which UID goes to disk (docs/design.md#ownership). The annotation names the user inside the container:
// - the volume's mount is idmapped (mount `uidMappings` or the `idmap`/`ridmap` option; under
//   NRI, any mount of a container in a user namespace): the kernel maps on access, so the
//   container UID is written as is;
// - else the container has a user namespace (`linux.uidMappings`): mapped through it, and a
//   UID outside every range cannot be written (it would show as the overflow UID inside);
// - else as is.
// Pure functions of the container's mounts and mappings (from config.json or from NRI): no file
// system access, so they are tested without containers.
import path from 'node:path';
import type { Spec } from '../oci/spec.ts';

export interface IdMapping {
  containerID: number;
  hostID: number;
  size: number;
}

export type UidTranslation = { kind: 'idmapped' } | { kind: 'userns'; mappings: readonly IdMapping[] } | { kind: 'none' };

/** The largest UID chown(2) accepts: (uid_t)-1 means "leave unchanged". */
const MAX_HOST_UID = 0xfffffffe;

/** Host ID for container ID `id`, or undefined when no range covers it. */
export function mapId(id: number, mappings: readonly IdMapping[]): number | undefined {
  for (const m of mappings) {
    const offset = id - m.containerID;
    if (offset >= 0 && offset < m.size) {
      const host = m.hostID + offset;
      return host <= MAX_HOST_UID ? host : undefined;
    }
  }
  return undefined;
}

export function hostUid(uid: number, t: UidTranslation): number | undefined {
  return t.kind === 'userns' ? mapId(uid, t.mappings) : uid;
}

export interface MountLike {
  source?: unknown;
  options?: unknown;
  uidMappings?: unknown;
  /** NRI's mounts of a container in a user namespace (nri/wire/plain-data.ts). */
  idmapped?: unknown;
}

/** What decides how a volume's UIDs reach the disk. */
export interface MountFacts {
  mounts: readonly MountLike[];
  uidMappings: readonly IdMapping[] | undefined;
}

export function isIdmappedMount(m: MountLike): boolean {
  if (m.idmapped === true || (Array.isArray(m.uidMappings) && m.uidMappings.length > 0)) return true;
  return Array.isArray(m.options) && m.options.some((o) => o === 'idmap' || o === 'ridmap');
}

/** Mounts whose source is `dir` or a path below it (a file of the volume mounted alone). */
export function mountsOf(mounts: readonly MountLike[], dir: string): MountLike[] {
  const root = resolvedPath(dir);
  return mounts.filter((m) => {
    if (typeof m?.source !== 'string' || !m.source.startsWith('/')) return false;
    const src = resolvedPath(m.source);
    return src === root || src.startsWith(root + '/');
  });
}

/** An empty, `.` or `..` element, or a trailing slash: what path.resolve changes in an absolute path. */
const NOT_NORMAL = /\/\/|\/\.\.?(?:\/|$)|.\/$/;

/**
 * path.resolve(p), without its work for an absolute path already in that form (a runtime's mount
 * sources are: every CreateContainer matches each of them against each volume with owners).
 */
export function resolvedPath(p: string): string {
  return p.startsWith('/') && !NOT_NORMAL.test(p) ? p : path.resolve(p);
}

/**
 * How UIDs of the volume at `dir` reach the disk. Returns 'mixed' when the volume is mounted
 * both idmapped and not: one owner on disk cannot mean the same user through both.
 */
export function volumeTranslation(facts: MountFacts, dir: string): UidTranslation | 'mixed' {
  const mounts = mountsOf(facts.mounts, dir);
  const idmapped = mounts.filter(isIdmappedMount).length;
  if (idmapped > 0 && idmapped < mounts.length) return 'mixed';
  if (idmapped > 0) return { kind: 'idmapped' };
  const mappings = facts.uidMappings;
  return mappings && mappings.length > 0 ? { kind: 'userns', mappings } : { kind: 'none' };
}

/** linux.uidMappings when non-empty (the schema checked its shape when the spec was loaded). */
export function userNamespaceMappings(spec: Spec): IdMapping[] | undefined {
  const linux = spec.linux as { uidMappings?: IdMapping[] } | undefined;
  const m = linux?.uidMappings;
  return Array.isArray(m) && m.length > 0 ? m : undefined;
}

/** "0-65535 → 100000-165535, …" for error messages (mappings are runtime-made, not secret). */
export function describeMappings(mappings: readonly IdMapping[]): string {
  return mappings.map((m) => `${m.containerID}-${m.containerID + m.size - 1} → ${m.hostID}-${m.hostID + m.size - 1}`).join(', ');
}
