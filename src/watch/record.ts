// A pod's owners record: what the shim applied at create (pod UID, pod directory, volumes with
// owners and UID mapping), so that `envhook watch` can apply it again after every rewrite.
// One JSON file a pod, `<runDir>/owners/<podUid>.json`, replaced atomically; every container
// of the pod writes the same volumes, so the last create wins. Read back, it is checked as
// untrusted input: schema, size, and each volume directory must be the kubelet's layout under
// the record's pod directory. The NRI plugin keeps the same records of the pods it watches in
// `<runDir>/nri-owners/`, with the sandbox that started the watch (nri/worker/pod-watch.ts).
import fs from 'node:fs';
import path from 'node:path';
import { EnvhookError } from '../errors.ts';
import { atomicWrite } from '../fs/atomic-write.ts';
import { openConfined, readBounded, ConfinedError } from '../fs/confined.ts';
import { validateOwnersRecord } from '../generated/validators.js';
import { check } from '../schema.ts';
import { normalize, type VolumeOwner } from '../ownership/annotation.ts';
import type { UidTranslation } from '../ownership/uidmap.ts';
import type { PreparedVolume } from '../ownership/prepare.ts';
import type { WatchVolume } from './registry.ts';
import { ensureRunDir, recordsDir, RECORDS, type RecordsKind } from './run-dir.ts';

export interface RecordVolume {
  volume: string;
  /** `<podDir>/volumes/kubernetes.io~{configmap,secret,projected,downward-api}/<volume>`. */
  dir: string;
  defaultUser?: number;
  items?: { path: string; user: number }[];
  uidMapping: UidTranslation;
  /**
   * A container reads envhook's owned copy `<runDir>/volumes/<podUid>/<volume>` (the record's run
   * directory): rewrites are copied there. `inPlace`: another container mounts the kubelet's own
   * files, chowned in place (created before owned copies).
   */
  copy?: boolean;
  inPlace?: boolean;
}

export interface OwnersRecord {
  podUid: string;
  podDir: string;
  volumes: RecordVolume[];
  /** NRI records: the pod sandbox whose stop ends the watch. */
  sandbox?: string;
}

const MAX_RECORD = 1 << 20;
const PLUGINS = new Set(['kubernetes.io~configmap', 'kubernetes.io~secret', 'kubernetes.io~projected', 'kubernetes.io~downward-api']);
const RECORD_NAME = /^([A-Za-z0-9][A-Za-z0-9_.-]{0,127})\.json$/;

/** The record's entry for one volume, from the annotation's entry and the start's facts. */
export function recordVolume(entry: VolumeOwner, dir: string, uidMapping: UidTranslation): RecordVolume {
  const v: RecordVolume = { volume: entry.volume, dir, uidMapping };
  if (entry.defaultUser !== undefined) v.defaultUser = entry.defaultUser;
  if (entry.items.length > 0) v.items = entry.items.map((i) => ({ path: i.path, user: i.user }));
  return v;
}

/**
 * The record of a start's prepared owners, or undefined when the volumes are not all the
 * kubelet's volumes of one pod (direct use with --volume or --pod-dir overrides).
 */
export function ownersRecordOf(all: readonly PreparedVolume[]): OwnersRecord | undefined {
  // A volume the container does not mount is left alone (ownership/copy-plan.ts): not watched for it.
  const prepared = all.filter((p) => p.notMounted !== true);
  if (prepared.length === 0) return undefined;
  const podDir = path.dirname(path.dirname(path.dirname(prepared[0]!.dir)));
  const record: OwnersRecord = {
    podUid: path.basename(podDir),
    podDir,
    // inPlace given (false): a record of this version, whose containers that mount the kubelet's
    // files say so; a record without it predates owned copies (mergeRecords).
    volumes: prepared.map((p) => ({ ...recordVolume(p.entry, p.dir, p.translation), ...(p.copy ? { copy: true } : {}), inPlace: false })),
  };
  try {
    checkRecord({ version: 1, ...record }, 'owners record');
  } catch {
    return undefined;
  }
  return record;
}

/**
 * A create's record over the pod's record already there (its other containers'): a volume is
 * copied when any container reads the copy, and also chowned in place when any container mounts
 * the kubelet's files, which a record written before owned copies (no `inPlace`, no `copy`) says
 * of all its volumes: a container created before the upgrade keeps its owners.
 */
export function mergeRecords(old: OwnersRecord | undefined, next: OwnersRecord): OwnersRecord {
  if (old === undefined || old.podDir !== next.podDir) return next;
  const before = new Map(old.volumes.map((v) => [v.dir, v]));
  const volumes = next.volumes.map((v) => {
    const o = before.get(v.dir);
    if (o === undefined) return v;
    const copy = v.copy === true || o.copy === true;
    const inPlace = v.inPlace === true || o.inPlace === true || (o.inPlace === undefined && o.copy !== true);
    return { ...v, ...(copy ? { copy } : {}), inPlace };
  });
  return { ...next, volumes };
}

/** Writes (replaces) the pod's record; creates the run directory 0700 where missing. */
export function writeOwnersRecord(runDir: string, record: OwnersRecord, kind: RecordsKind = RECORDS): string {
  const data = { version: 1, ...record };
  checkRecord(data, `owners record of pod ${JSON.stringify(record.podUid)}`);
  const file = path.join(ensureRunDir(runDir, kind), `${record.podUid}.json`);
  atomicWrite(file, JSON.stringify(data) + '\n', { newFileMode: 0o600 });
  return file;
}

/** The pod UID a record file name stands for, or undefined for any other name (temp files). */
export function podUidOfRecord(name: string): string | undefined {
  return RECORD_NAME.exec(name)?.[1];
}

/** Reads and checks `<runDir>/owners/<name>` (or `nri-owners`), without following a symlink. */
export function readOwnersRecord(runDir: string, name: string, kind: RecordsKind = RECORDS): OwnersRecord {
  const where = `owners record ${path.join(recordsDir(runDir, kind), name)}`;
  let bytes: Buffer;
  try {
    const file = openConfined(recordsDir(runDir, kind), name);
    try {
      bytes = readBounded(file, MAX_RECORD);
    } finally {
      fs.closeSync(file.fd);
    }
  } catch (err) {
    if (err instanceof ConfinedError) throw new EnvhookError(`${where}: ${err.reason}`, { cause: err });
    throw err;
  }
  let data: unknown;
  try {
    data = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw new EnvhookError(`${where}: not valid JSON`);
  }
  checkRecord(data, where);
  const record = data as OwnersRecord & { version?: number };
  if (`${record.podUid}.json` !== name) throw new EnvhookError(`${where}: /podUid: does not match the file name`);
  delete record.version;
  return record;
}

function checkRecord(data: unknown, where: string): void {
  check(validateOwnersRecord, data, where);
  const r = data as OwnersRecord;
  if (path.resolve(r.podDir) !== r.podDir || path.basename(r.podDir) !== r.podUid)
    throw new EnvhookError(`${where}: /podDir: must be a normalised path ending in the pod UID`);
  r.volumes.forEach((v, i) => {
    const plugin = path.basename(path.dirname(v.dir));
    if (path.dirname(v.dir) !== path.join(r.podDir, 'volumes', plugin) || !PLUGINS.has(plugin) || path.basename(v.dir) !== v.volume) {
      throw new EnvhookError(
        `${where}: /volumes/${i}/dir: must be <podDir>/volumes/kubernetes.io~{configmap,secret,projected,downward-api}/<volume>`,
      );
    }
  });
}

/** The record's entries of watched volumes: one a volume, a copy and a chown in place of it merged. */
export function recordVolumes(volumes: readonly WatchVolume[]): RecordVolume[] {
  const byName = new Map<string, { r: RecordVolume; copy: boolean; plain: boolean }>();
  for (const v of volumes) {
    const name = v.owners.volume;
    const e = byName.get(name) ?? { r: recordVolume(v.owners, v.dir, v.uidMapping), copy: false, plain: false };
    byName.set(name, e);
    if (v.copy) e.copy = true;
    else e.plain = true;
  }
  return [...byName.values()].map(({ r, copy, plain }) => (copy ? { ...r, copy: true, ...(plain ? { inPlace: true } : {}) } : r));
}

/**
 * The registry's input; item paths are checked as in the annotation (relative, no `..`). A
 * copied volume's copy is in `runDir`, the directory the record was read from.
 */
export function watchVolumesOf(record: OwnersRecord, runDir?: string): WatchVolume[] {
  let owners: VolumeOwner[];
  try {
    owners = normalize(record.volumes.map(({ volume, defaultUser, items }) => ({ volume, defaultUser, items })));
  } catch (err) {
    // normalize() speaks of the annotation the record was made from.
    throw new EnvhookError(`owners record of pod ${JSON.stringify(record.podUid)}: ${(err as Error).message}`, { cause: err });
  }
  return record.volumes.flatMap((v, i) => {
    const plain = { dir: v.dir, owners: owners[i]!, uidMapping: v.uidMapping };
    if (!v.copy || runDir === undefined) return [plain];
    const copied = { ...plain, copy: { runDir, podUid: record.podUid, volume: v.volume } };
    return v.inPlace ? [copied, plain] : [copied];
  });
}
