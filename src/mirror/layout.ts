// Where envhook keeps its owned copies of atomic-write volumes (docs/ownership.md):
//   <runDir>/volumes/                      0700 root: nobody else passes here
//   <runDir>/volumes/<pod uid>/            0700 root
//   <runDir>/volumes/<pod uid>/<volume>/   0755 root: the container's mount of the volume
//     ..data -> ..<timestamp>.<random>     the atomic writer's layout, swapped by rename
//     <name> -> ..data/<name>              one link per top-level visible name
// Pure path rules here (pod UIDs and volume names checked, so nothing else reaches a path), and
// the checks of the directories above a copy, which must be root's alone.
import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import { EnvhookError } from '../errors.ts';

export const COPIES_DIR = 'volumes';
/** Same rules as k8s/pod.ts (POD_UID) and k8s/volumes.ts (VOLUME_NAME): no `/`, `..` or NUL. */
const POD_UID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;
const VOLUME_NAME = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** Where one volume's copy lives. */
export interface CopyPlace {
  runDir: string;
  podUid: string;
  volume: string;
}

export function copiesRoot(runDir: string): string {
  return path.join(runDir, COPIES_DIR);
}

export function podCopiesDir(runDir: string, podUid: string): string {
  if (!POD_UID.test(podUid)) throw new EnvhookError(`pod UID ${JSON.stringify(podUid)} cannot name an owned copy`);
  return path.join(copiesRoot(runDir), podUid);
}

/** `<runDir>/volumes/<pod uid>/<volume>`: the directory the container's mount points at. */
export function copyDir(p: CopyPlace): string {
  if (!VOLUME_NAME.test(p.volume)) throw new EnvhookError(`volume ${JSON.stringify(p.volume)} cannot name an owned copy`);
  return path.join(podCopiesDir(p.runDir, p.podUid), p.volume);
}

/** The pod UID and volume of a path inside the copies tree (a mount source), or undefined. */
export function placeOf(runDir: string, source: string): { podUid: string; volume: string; rest: string } | undefined {
  const rel = path.relative(copiesRoot(runDir), path.resolve(source));
  if (rel.startsWith('..') || path.isAbsolute(rel)) return undefined;
  const [podUid, volume, ...rest] = rel.split('/');
  if (podUid === undefined || volume === undefined || !POD_UID.test(podUid) || !VOLUME_NAME.test(volume)) return undefined;
  return { podUid, volume, rest: rest.join('/') };
}

/** `..2006_01_02_15_04_05.<digits>`: the name the kubelet's writer gives a new directory (os.MkdirTemp). */
export function timestampedName(now = new Date()): string {
  const p = (n: number) => String(n).padStart(2, '0');
  const ts = `${now.getUTCFullYear()}_${p(now.getUTCMonth() + 1)}_${p(now.getUTCDate())}_${p(now.getUTCHours())}_${p(now.getUTCMinutes())}_${p(now.getUTCSeconds())}`;
  return `..${ts}.${crypto.randomInt(2 ** 32 - 1)}`;
}

/**
 * Throws unless `st` (an lstat) is a real directory owned by this process's user, writable by
 * no one else, and, where `private` is set, with no access at all for group and others.
 */
export function checkOwnDir(dir: string, st: fs.Stats | undefined, isPrivate: boolean): void {
  const me = process.geteuid?.() ?? 0;
  if (st === undefined) throw new EnvhookError(`${dir} does not exist`);
  if (!st.isDirectory()) throw new EnvhookError(`${dir} is not a directory`);
  const denied = isPrivate ? 0o077 : 0o022;
  if (st.uid !== me || (st.mode & denied) !== 0)
    throw new EnvhookError(
      `${dir} must be owned by ${me === 0 ? 'root' : `UID ${me}`} and ${isPrivate ? 'closed to' : 'not writable by'} group and others`,
    );
}
