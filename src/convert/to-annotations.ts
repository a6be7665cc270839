// Kubernetes fields → envhook.io/* annotations, for nodes whose kubelet lacks them: env entries
// from the first fileKeyRef on (or from convert's own mark), `enableServiceLinks: false`, and
// KEP-5936 defaultUser / user. The new values pass the node's own readers before they are
// written; what cannot move stays, with a note.
import { isMap, isScalar, type Document, type Node, type YAMLMap } from 'yaml';
import { EnvhookError } from '../errors.ts';
import { readEnv, type EnvVar } from '../k8s/annotations.ts';
import { readVolumeOwners } from '../ownership/annotation.ts';
import { ATOMIC_TYPES, type PodFacts } from '../manifest/pod-facts.ts';
import { getMap, getSeq, mapsOf, offsetOf, pairOf } from '../manifest/nodes.ts';
import type { PodAnnotations } from '../lint/read-annotations.ts';
import { writeAnnotation } from './write-annotation.ts';
import { MOVED_MARK, ptr, type Noter } from './note.ts';
import { ENV_KEY, SERVICE_LINKS_KEY, VOLUME_OWNERS } from '../k8s/annotation-keys.ts';

export function toAnnotations(doc: Document, facts: PodFacts, a: PodAnnotations, note: Noter): boolean {
  let changed = env(doc, facts, a, note);
  changed = serviceLinks(doc, facts, a, note) || changed;
  changed = owners(doc, facts, a, note) || changed;
  return changed;
}

function env(doc: Document, facts: PodFacts, a: PodAnnotations, note: Noter): boolean {
  const result: Record<string, EnvVar[]> = { ...a.env };
  let moved = false;
  for (const c of facts.containers) {
    const seq = getSeq(c.node, 'env');
    if (!seq) continue;
    const at = `/spec/${c.list}/${c.index}/env`;
    // The mark before the first entry is read back as the sequence's own comment.
    const marks = (comment: string | null | undefined) => comment?.split('\n').includes(MOVED_MARK) ?? false;
    const marked = marks(seq.commentBefore) ? 0 : seq.items.findIndex((n) => marks((n as Node).commentBefore));
    const from = marked >= 0 ? marked : seq.items.findIndex((n) => isMap(n) && isMap(getMap(n, 'valueFrom')?.get('fileKeyRef', true)));
    if (from < 0) continue;
    const entries = seq.items.slice(from).map((n) => (n as Node).toJSON() as EnvVar);
    const offset = offsetOf(seq.items[from] as Node);
    if ((a.envFrom?.[c.name]?.length ?? 0) > 0) {
      note(
        ENV_KEY,
        ptr(c.name),
        `stays native: the container has envhook.io/envFrom sources, which would then apply before ${at}/${from}…`,
        offset,
      );
      continue;
    }
    try {
      // The node's reader decides: only {name, value} and {name, valueFrom: {fileKeyRef}} pass.
      readEnv({ [ENV_KEY]: JSON.stringify({ [c.name]: entries }) });
    } catch (err) {
      if (!(err instanceof EnvhookError)) throw err;
      note(
        ENV_KEY,
        ptr(c.name),
        `stays native: from ${at}/${from} on, not every entry is a value or fileKeyRef entry (the order must be kept)`,
        offset,
      );
      continue;
    }
    // Moved entries were applied before the annotation's own: they go first.
    result[c.name] = [...entries, ...(a.env?.[c.name] ?? [])];
    seq.items.splice(from);
    if (seq.items.length === 0) c.node.delete('env');
    moved = true;
  }
  if (moved) writeAnnotation(doc, facts, ENV_KEY, result);
  return moved;
}

function serviceLinks(doc: Document, facts: PodFacts, a: PodAnnotations, note: Noter): boolean {
  const pair = facts.spec && pairOf(facts.spec, 'enableServiceLinks');
  if (!pair || !isScalar(pair.value) || pair.value.value !== false) return false;
  if (a.serviceLinks) {
    note(
      SERVICE_LINKS_KEY,
      '',
      'enableServiceLinks stays native: the pod already has an envhook.io/serviceLinks annotation',
      offsetOf(pair),
    );
    return false;
  }
  writeAnnotation(doc, facts, SERVICE_LINKS_KEY, { '*': false });
  facts.spec!.delete('enableServiceLinks');
  return true;
}

interface RawOwner {
  volume: string;
  defaultUser?: number;
  items?: { path: string; user: number }[];
}

function owners(doc: Document, facts: PodFacts, a: PodAnnotations, note: Noter): boolean {
  const result: RawOwner[] = [...(a.ownersRaw ?? [])];
  let moved = false;
  facts.volumes.forEach((v) => {
    if (!(ATOMIC_TYPES as readonly (string | undefined)[]).includes(v.type) || !v.source) return;
    const entry: RawOwner = { volume: v.name };
    const fields: [YAMLMap, 'defaultUser' | 'user'][] = [];
    if (v.source.has('defaultUser')) {
      entry.defaultUser = v.source.get('defaultUser') as number;
      fields.push([v.source, 'defaultUser']);
    }
    const items: { path: string; user: number }[] = [];
    for (const f of v.files) {
      if (f.node?.has('user')) {
        items.push({ path: f.path, user: f.node.get('user') as number });
        fields.push([f.node, 'user']);
      }
    }
    if (items.length) entry.items = items;
    const where = offsetOf(v.node);
    if (podCertificateUser(v.source))
      note(VOLUME_OWNERS, '', `volume ${JSON.stringify(v.name)}: a podCertificate user stays native (one user for several files)`, where);
    if (fields.length === 0) return;
    if (result.some((o) => o.volume === v.name)) {
      note(
        VOLUME_OWNERS,
        '',
        `volume ${JSON.stringify(v.name)}: its users stay native: envhook.io/volumeOwners already has an entry for it`,
        where,
      );
      return;
    }
    try {
      readVolumeOwners({ [VOLUME_OWNERS]: JSON.stringify([...result, entry]) });
    } catch (err) {
      if (!(err instanceof EnvhookError)) throw err;
      note(
        VOLUME_OWNERS,
        '',
        `volume ${JSON.stringify(v.name)}: its users stay native: they are not what envhook.io/volumeOwners accepts`,
        where,
      );
      return;
    }
    result.push(entry);
    for (const [node, key] of fields) node.delete(key);
    moved = true;
  });
  if (moved) writeAnnotation(doc, facts, VOLUME_OWNERS, result);
  return moved;
}

function podCertificateUser(source: YAMLMap): boolean {
  return mapsOf(getSeq(source, 'sources')).some(([s]) => getMap(s, 'podCertificate')?.has('user'));
}
