// envhook.io/volumeOwners (docs/design.md#annotations, KEP-5936): parsed, schema-checked (ajv, build time), then
// normalised. The pod author writes this annotation, so it is untrusted: item paths are split
// here once (relative, no `..`) and never joined onto a host path by string.
import { SchemaError } from '../errors.ts';
import { readAnnotation } from '../k8s/annotations.ts';
import { validateVolumeOwners } from '../generated/validators.js';
import { splitRelative, ConfinedError } from '../fs/confined.ts';
import type { Annotations } from '../k8s/identity.ts';
import { VOLUME_OWNERS } from '../k8s/annotation-keys.ts';

const WHERE = `annotation "${VOLUME_OWNERS}"`;

export interface OwnerItem {
  /** The item path as written (for messages and the plan). */
  path: string;
  /** Its names, checked: relative, no `..`, no empty or `.` names. */
  names: string[];
  /** names.join('/'): the key the walker looks files up by. */
  key: string;
  user: number;
}

export interface VolumeOwner {
  volume: string;
  defaultUser: number | undefined;
  items: OwnerItem[];
}

interface RawEntry {
  volume: string;
  defaultUser?: number;
  items?: { path: string; user: number }[];
}

/** The annotation's entries, or undefined when the pod does not ask for owners. */
export function readVolumeOwners(annotations: Annotations): VolumeOwner[] | undefined {
  const data = readAnnotation(annotations, VOLUME_OWNERS, validateVolumeOwners, {});
  return data === undefined ? undefined : normalize(data as RawEntry[]);
}

export function normalize(entries: readonly RawEntry[]): VolumeOwner[] {
  const seen = new Set<string>();
  return entries.map((entry, i) => {
    if (seen.has(entry.volume))
      throw new SchemaError(WHERE, `/${i}/volume`, `volume ${JSON.stringify(entry.volume)} is listed more than once`);
    seen.add(entry.volume);
    const keys = new Set<string>();
    const items = (entry.items ?? []).map((item, j): OwnerItem => {
      const at = `/${i}/items/${j}/path`;
      const names = itemNames(item.path, at);
      const key = names.join('/');
      if (keys.has(key)) throw new SchemaError(WHERE, at, `path ${JSON.stringify(key)} is listed more than once`);
      keys.add(key);
      return { path: item.path, names, key, user: item.user };
    });
    return { volume: entry.volume, defaultUser: entry.defaultUser, items };
  });
}

function itemNames(path: string, at: string): string[] {
  let names: string[];
  try {
    names = splitRelative(path);
  } catch (err) {
    if (err instanceof ConfinedError) throw new SchemaError(WHERE, at, err.reason);
    throw err;
  }
  // The atomic writer reserves top-level names starting with `..` (`..data`, the timestamped
  // directories): no visible path can start with one.
  if (names[0]!.startsWith('..')) throw new SchemaError(WHERE, at, "path must not start with '..'");
  return names;
}
