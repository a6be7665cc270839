// The owners of one volume as written to disk: each UID of the annotation (the user inside the
// container) translated by the volume's UID mapping (uidmap.ts). Used at start (prepare.ts) and
// by the watcher (src/watch/), so both write the same UIDs and fail with the same message.
import { EnvhookError } from '../errors.ts';
import type { VolumeOwner } from './annotation.ts';
import { describeMappings, hostUid, type UidTranslation } from './uidmap.ts';
import type { Owner } from './walk.ts';

export interface VolumeOwners {
  /** Owner of files no item names; undefined leaves them alone. */
  defaultOwner: Owner | undefined;
  /** Item owners by normalised relative path (OwnerItem.key). */
  items: Map<string, Owner>;
}

/** Throws EnvhookError when a UID is outside the container's user namespace. */
export function ownersOf(entry: VolumeOwner, translation: UidTranslation): VolumeOwners {
  const owner = (uid: number, what: string): Owner => {
    const host = hostUid(uid, translation);
    if (host === undefined) {
      const ranges = translation.kind === 'userns' ? describeMappings(translation.mappings) : 'none';
      throw new EnvhookError(
        `volume "${entry.volume}": ${what} ${uid} is outside the container's user namespace (linux.uidMappings: ${ranges})`,
      );
    }
    return { uid, hostUid: host };
  };
  const defaultOwner = entry.defaultUser === undefined ? undefined : owner(entry.defaultUser, 'defaultUser');
  const items = new Map<string, Owner>();
  for (const item of entry.items) items.set(item.key, owner(item.user, `item path ${JSON.stringify(item.path)}: user`));
  return { defaultOwner, items };
}
