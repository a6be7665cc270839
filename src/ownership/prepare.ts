// The owners part of the plan. Everything that can fail for a reason other than a race is
// checked here, for every volume of the annotation, before the first chown (ownership/chown.ts):
// volume found and of the right kind, UIDs mappable, `..data` sound, every item path a regular
// file in the data directory. Each prepared volume holds its data directory open (so the chown
// walks what was checked); releaseOwners closes them.
import fs from 'node:fs';
import { EnvhookError } from '../errors.ts';
import { ConfinedError, fdPath, fileKind, openDirPathAt } from '../fs/confined.ts';
import type { VolumeLocator } from '../k8s/volumes.ts';
import type { OwnerItem, VolumeOwner } from './annotation.ts';
import { closeDataDir, openDataDir, type DataDir } from '../fs/datadir.ts';
import { ownersOf } from './owners.ts';
import { volumeTranslation, type MountFacts, type UidTranslation } from './uidmap.ts';
import type { Owner } from './walk.ts';
import { NOT_MOUNTED, planCopy, type CopySettings, type PlannedCopy } from './copy-plan.ts';

export interface PreparedVolume {
  /** The annotation's entry (the owners record of `envhook watch` restates it). */
  entry: VolumeOwner;
  volume: string;
  dir: string;
  data: DataDir;
  translation: UidTranslation;
  defaultOwner: Owner | undefined;
  items: Map<string, Owner>;
  /** Read through envhook's owned copy (made by the chown step); undefined: chowned in place. */
  copy?: PlannedCopy | undefined;
  /** The container mounts nothing of it (where copies are made): left alone. */
  notMounted?: boolean | undefined;
  /** Copies made to follow the kubelet's rewrites during the start (ownership/chown.ts, bounded). */
  catchUps?: number | undefined;
}

/** One data file of a prepared volume that got (or, in a dry run, would get) an owner: what the chown reports. */
export interface OwnedFile {
  volume: string;
  path: string;
  uid: number;
  hostUid: number;
}

/** Every entry checked and opened, or none: on a failure the volumes opened so far are closed. */
export function prepareOwners(
  entries: readonly VolumeOwner[],
  volumes: VolumeLocator,
  mounts: MountFacts,
  copies?: CopySettings | undefined,
): PreparedVolume[] {
  const prepared: PreparedVolume[] = [];
  try {
    for (const entry of entries) {
      const p = prepareVolume(entry, volumes, mounts);
      prepared.push(p);
      const copy = planCopy(p, mounts.mounts, copies);
      if (copy === NOT_MOUNTED) p.notMounted = true;
      else p.copy = copy;
    }
  } catch (err) {
    releaseOwners(prepared);
    throw err;
  }
  return prepared;
}

export function releaseOwners(prepared: readonly PreparedVolume[]): void {
  for (const p of prepared) closeDataDir(p.data);
}

function prepareVolume(entry: VolumeOwner, volumes: VolumeLocator, mounts: MountFacts): PreparedVolume {
  const { volume } = entry;
  const dir = volumes.find(volume, 'atomic');
  const translation = volumeTranslation(mounts, dir);
  if (translation === 'mixed')
    throw new EnvhookError(
      `volume "${volume}" is mounted both idmapped and not idmapped: one owner on disk cannot be the same user through both`,
    );
  const { defaultOwner, items } = ownersOf(entry, translation);
  const data = openDataDir(volume, dir);
  try {
    for (const item of entry.items) checkItem(volume, data.fd, item);
  } catch (err) {
    closeDataDir(data);
    throw err;
  }
  return { entry, volume, dir, data, translation, defaultOwner, items };
}

/** The item's path, resolved in the data directory without following links, is a regular file. */
function checkItem(volume: string, dataFd: number, item: OwnerItem): void {
  const at = `volume "${volume}": item path ${JSON.stringify(item.path)}`;
  const notIn = () => new EnvhookError(`${at} is not in the volume`);
  // A name directly in the data directory is looked up there; a deeper one in its own directory, opened step by step.
  const direct = item.names.length === 1;
  let dirFd = dataFd;
  try {
    if (!direct) dirFd = openDirPathAt(dataFd, item.names.slice(0, -1));
  } catch (err) {
    if (err instanceof ConfinedError) throw err.notFound ? notIn() : new EnvhookError(`${at}: ${err.reason}`, { cause: err });
    throw err;
  }
  try {
    const st = fs.lstatSync(fdPath(dirFd, item.names[item.names.length - 1]!), { throwIfNoEntry: false });
    if (st === undefined) throw notIn();
    if (!st.isFile()) throw new EnvhookError(`${at} is ${fileKind(st)}, not a file`);
  } finally {
    if (!direct) fs.closeSync(dirFd);
  }
}
