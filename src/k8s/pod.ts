// The pod directory is taken only from what the kubelet made: mount sources under
// <kubeletRoot>/pods/<uid>/{etc-hosts,containers,volumes}. Annotations cannot choose a host
// path; the runtime's pod-UID annotation is only a cross-check (SPEC §3).
import fs from 'node:fs';
import path from 'node:path';
import { EnvhookError } from '../errors.ts';
import type { Spec } from '../oci/spec.ts';
import { podUidAnnotation, type Annotations } from './identity.ts';

const KUBELET_ENTRIES = new Set(['etc-hosts', 'containers', 'volumes']);
const POD_UID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;

export interface PodDir {
  dir: string;
  uid: string | undefined;
  /** 'mounts' when found from kubelet-made mounts; 'flag' when the admin named it. */
  from: 'mounts' | 'flag';
}

/** Pod UIDs named by kubelet-made mount sources under `kubeletRoot`. */
export function podUidsFromMounts(spec: Spec, kubeletRoot: string): Set<string> {
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
export function discoverPodDir(spec: Spec, annotations: Annotations, kubeletRoot: string, podDirFlag?: string): PodDir | undefined {
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
  const st = fs.lstatSync(dir, { throwIfNoEntry: false });
  if (!st?.isDirectory()) throw new EnvhookError(`pod directory ${dir} not found`);
  return { dir, uid, from: 'mounts' };
}
