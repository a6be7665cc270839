// envhook.io/* annotations → the Kubernetes fields they mirror, where the fields can say the
// same: env entries (KEP-3721 fileKeyRef and plain values with $(VAR)), `"*": false` service
// links, volume owners (KEP-5936 defaultUser, items[].user). The rest stays, with a note. A pod
// left with no envhook annotation loses `runtimeClassName: envhook`.
import { isMap, isScalar, type Document, type YAMLSeq } from 'yaml';
import { type EnvVar } from '../k8s/annotations.ts';
import { ATOMIC_TYPES, normalPath, type PodFacts, type VolumeFact } from '../manifest/pod-facts.ts';
import { getSeq, offsetOf, pairOf } from '../manifest/nodes.ts';
import type { PodAnnotations } from '../lint/read-annotations.ts';
import { writeAnnotation } from './write-annotation.ts';
import { MOVED_MARK, ptr, type Noter } from './note.ts';
import { ENV_FROM_KEY, ENV_KEY, ENVHOOK_PREFIX, SERVICE_LINKS_KEY, VOLUME_OWNERS } from '../k8s/annotation-keys.ts';
import { RUNTIME_CLASS } from '../lint/lint-manifest.ts';

/** Converts one pod in place; true when anything changed. */
export function toNative(doc: Document, facts: PodFacts, a: PodAnnotations, note: Noter): boolean {
  let changed = false;
  if (a.env) changed = env(doc, facts, a, note) || changed;
  for (const [c, list] of Object.entries(a.envFrom ?? {})) {
    if (list.length)
      note(
        ENV_FROM_KEY,
        ptr(c),
        'stays an annotation: whole-file env sources (fileRef) and volume sources (volumeRef) have no native form; KEP-3721 has fileKeyRef only',
      );
  }
  if (a.serviceLinks) changed = serviceLinks(facts, a.serviceLinks, doc, note) || changed;
  if (a.ownersRaw) changed = owners(doc, facts, a.ownersRaw, note) || changed;
  if (changed) runtimeClass(facts, note);
  return changed;
}

/**
 * The pod's last envhook annotation moved to native fields: `runtimeClassName: envhook` only
 * took the pod to envhook's handler, which has nothing left to do for it. Removed, with a note.
 */
function runtimeClass(facts: PodFacts, note: Noter): void {
  const left = facts.annotationsNode?.items.some((p) => isScalar(p.key) && String(p.key.value).startsWith(ENVHOOK_PREFIX));
  const pair = facts.spec && pairOf(facts.spec, 'runtimeClassName');
  if (left || !pair || !isScalar(pair.value) || pair.value.value !== RUNTIME_CLASS) return;
  note(
    'spec.runtimeClassName',
    '',
    `removed: the pod has no envhook annotation left, and the native fields need no runtime class`,
    offsetOf(pair),
  );
  // Its comment goes with it: on its key, or, for the first key, on the map (between `spec:` and it).
  if (facts.spec!.items[0] === pair) facts.spec!.commentBefore = undefined;
  facts.spec!.delete('runtimeClassName');
}

function env(doc: Document, facts: PodFacts, a: PodAnnotations, note: Noter): boolean {
  const remaining: Record<string, EnvVar[]> = { ...a.env };
  for (const [c, list] of Object.entries(a.env!)) {
    if (list.length === 0) continue;
    const container = facts.containers.find((x) => x.name === c);
    if (!container) {
      note(ENV_KEY, ptr(c), 'stays an annotation: the pod has no container of that name');
      continue;
    }
    // envFrom file sources apply after the runtime's env and before env entries: moved to the
    // native env, the entries would apply before those sources, and lose to them.
    if ((a.envFrom?.[c]?.length ?? 0) > 0) {
      note(
        ENV_KEY,
        ptr(c),
        'stays an annotation: the container also has envhook.io/envFrom sources, which must apply before these entries',
      );
      continue;
    }
    // KEP-3721's native fileKeyRef reads an emptyDir only, and no native field reads a whole
    // file as a value: envhook's wider sources (docs/design.md#env-from-other-volumes) have no native form.
    const why = list.map(noNativeForm(facts)).findIndex((w) => w !== undefined);
    if (why >= 0) {
      note(ENV_KEY, ptr(c, why), `stays an annotation: ${noNativeForm(facts)(list[why]!)!}`);
      continue;
    }
    let seq = getSeq(container.node, 'env');
    if (!seq) {
      seq = doc.createNode([]) as YAMLSeq;
      container.node.set('env', seq);
    }
    list.forEach((entry, i) => {
      const node = doc.createNode(entry);
      // Marks where the moved entries start, so that --to annotations moves back these and
      // not the container's own env entries before them.
      if (i === 0) node.commentBefore = MOVED_MARK;
      seq.add(node);
    });
    delete remaining[c];
  }
  if (Object.keys(remaining).length === Object.keys(a.env!).length) return false;
  writeAnnotation(doc, facts, ENV_KEY, remaining);
  return true;
}

/** Why an env entry has no native form; undefined when it has one. */
function noNativeForm(facts: PodFacts): (e: EnvVar) => string | undefined {
  return (e) => {
    if (!e.valueFrom) return undefined;
    if (e.valueFrom.fileRef) return 'fileRef (a whole file as the value) has no native form; KEP-3721 has fileKeyRef only';
    const name = e.valueFrom.fileKeyRef.volumeName;
    if (facts.volumes.find((v) => v.name === name)?.type === 'emptyDir') return undefined;
    return `its fileKeyRef reads volume ${JSON.stringify(name)}, not an emptyDir of the pod; KEP-3721's fileKeyRef reads emptyDirs only`;
  };
}

function serviceLinks(facts: PodFacts, links: Record<string, boolean>, doc: Document, note: Noter): boolean {
  const keys = Object.keys(links);
  if (keys.length !== 1 || keys[0] !== '*' || links['*'] !== false || !facts.spec) {
    if (keys.length)
      note(
        SERVICE_LINKS_KEY,
        '',
        'stays an annotation: only {"*": false} has a native form (enableServiceLinks: false); per-container switches have none',
      );
    return false;
  }
  facts.spec.set('enableServiceLinks', false);
  writeAnnotation(doc, facts, SERVICE_LINKS_KEY, undefined);
  return true;
}

interface RawOwner {
  volume: string;
  defaultUser?: number;
  items?: { path: string; user: number }[];
}

function owners(doc: Document, facts: PodFacts, entries: RawOwner[], note: Noter): boolean {
  const remaining: RawOwner[] = [];
  entries.forEach((entry, i) => {
    const why = blocker(facts, entry);
    if (why) {
      note(VOLUME_OWNERS, ptr(i), `stays an annotation: ${why}`);
      remaining.push(entry);
      return;
    }
    const v = facts.volumes.find((x) => x.name === entry.volume)!;
    if (entry.defaultUser !== undefined) v.source!.set('defaultUser', entry.defaultUser);
    for (const item of entry.items ?? []) fileNode(v, item.path)!.set('user', item.user);
  });
  if (remaining.length === entries.length) return false;
  writeAnnotation(doc, facts, VOLUME_OWNERS, remaining);
  return true;
}

/** Why an owners entry cannot move to the volume's own fields; undefined when it can. */
function blocker(facts: PodFacts, entry: RawOwner): string | undefined {
  const v = facts.volumes.find((x) => x.name === entry.volume);
  if (!v || !(ATOMIC_TYPES as readonly (string | undefined)[]).includes(v.type) || !isMap(v.source)) {
    return 'the pod has no configMap, secret, projected or downwardAPI volume of that name';
  }
  if (entry.defaultUser === undefined && !entry.items?.length) return 'it sets no owner';
  if (entry.defaultUser !== undefined && v.source.has('defaultUser')) return 'the volume already has a defaultUser';
  for (const item of entry.items ?? []) {
    const node = fileNode(v, item.path);
    if (!node) return 'an item path is not among the files the volume lists in its items (a native user needs the item)';
    if (node.has('user')) return 'an item of the volume already has a user';
  }
  return undefined;
}

function fileNode(v: VolumeFact, path: string) {
  const key = normalPath(path);
  return v.files.find((f) => f.node && normalPath(f.path) === key)?.node;
}
