// The pod directory is taken only from what the kubelet or the runtime made: mount sources under
// <kubeletRoot>/pods/<uid>/{etc-hosts,containers,volumes} in config.json, or NRI's own pod UID.
// Annotations cannot choose a host path; the runtime's pod-UID annotation is only a cross-check
// (docs/design.md#finding-volumes, #nri-mode).
import fs from 'node:fs';
import path from 'node:path';
import { EnvhookError } from '../errors.ts';
import { podUidAnnotation, type Annotations } from './identity.ts';

const KUBELET_ENTRIES = new Set(['etc-hosts', 'containers', 'volumes']);
const POD_UID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;

export interface PodDir {
  dir: string;
  uid: string | undefined;
  /** 'mounts': found from kubelet-made mounts; 'flag': the admin named it; 'uid': NRI's pod UID. */
  from: 'mounts' | 'flag' | 'uid';
}

/**
 * Where the pod directory comes from:
 * - `mounts`: the kubelet-made mount sources among the container's mounts, cross-checked with the
 *   runtime's pod-UID annotation (config.json: anything in it may come from the pod author);
 * - `flag`: the admin named it (`--pod-dir`);
 * - `uid`: the runtime's own pod UID (NRI's field, trusted): `<kubeletRoot>/pods/<uid>`.
 */
export type PodSource = { from: 'mounts' } | { from: 'flag'; dir: string } | { from: 'uid'; uid: string };

/** Mount sources are all this module reads of a config.json. */
interface WithMounts {
  mounts?: unknown;
}

/** The pod directory `pod` points to, with a container's mounts and annotations; undefined for a plain bundle. */
export function findPodDir(pod: PodSource, spec: WithMounts, annotations: Annotations, kubeletRoot: string): PodDir | undefined {
  if (pod.from === 'uid') return podDirOfUid(pod.uid, kubeletRoot);
  return discoverPodDir(spec, annotations, kubeletRoot, pod.from === 'flag' ? pod.dir : undefined);
}

/** `<kubeletRoot>/pods/<uid>` for a pod UID the runtime gave (NRI): it must be a real directory. */
export function podDirOfUid(uid: string, kubeletRoot: string): PodDir {
  if (!POD_UID.test(uid)) throw new EnvhookError(`pod UID ${JSON.stringify(uid)} is not a valid pod UID`);
  const dir = path.join(path.resolve(kubeletRoot), 'pods', uid);
  if (!isDirectory(dir)) throw new EnvhookError(`pod directory ${dir} not found`);
  return { dir, uid, from: 'uid' };
}

function isDirectory(dir: string): boolean {
  return fs.lstatSync(dir, { throwIfNoEntry: false })?.isDirectory() === true;
}

/** Pod UIDs named by kubelet-made mount sources under `kubeletRoot`. */
export function podUidsFromMounts(spec: WithMounts, kubeletRoot: string): Set<string> {
  const podsDir = path.resolve(kubeletRoot, 'pods') + '/';
  const uids = new Set<string>();
  const mounts = Array.isArray(spec.mounts) ? spec.mounts : [];
  for (const m of mounts) {
    const source = (m as { source?: unknown }).source;
    if (typeof source !== 'string' || !source.startsWith('/')) continue;
    const abs = path.resolve(source);
    if (!abs.startsWith(podsDir)) continue;
    const [uid, entry] = abs.slice(podsDir.length).split('/');
    if (uid && entry && KUBELET_ENTRIES.has(entry) && POD_UID.test(uid)) uids.add(uid);
  }
  return uids;
}

/**
 * Finds this container's pod directory. Returns undefined when the spec shows no kubelet-made
 * mount and no flag names one (a plain runc bundle); throws on any disagreement.
 */
export function discoverPodDir(spec: WithMounts, annotations: Annotations, kubeletRoot: string, podDirFlag?: string): PodDir | undefined {
  const annotated = podUidAnnotation(annotations);
  if (podDirFlag) return { dir: path.resolve(podDirFlag), uid: annotated, from: 'flag' };
  const uids = podUidsFromMounts(spec, kubeletRoot);
  if (uids.size > 1) throw new EnvhookError(`config.json mounts name more than one pod under ${kubeletRoot}/pods`);
  const [uid] = uids;
  if (uid === undefined) return undefined;
  if (annotated !== undefined && annotated !== uid) {
    throw new EnvhookError(`pod UID annotation "${annotated}" disagrees with the kubelet mounts (pod "${uid}")`);
  }
  const dir = path.join(path.resolve(kubeletRoot), 'pods', uid);
  if (!isDirectory(dir)) throw new EnvhookError(`pod directory ${dir} not found`);
  return { dir, uid, from: 'mounts' };
}
