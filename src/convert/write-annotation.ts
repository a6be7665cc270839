// Writing an envhook.io/* annotation back into a pod's metadata: compact JSON, in the scalar
// style the annotation had (a new one single-quoted); removed when nothing is left in it.
import { Pair, Scalar, YAMLMap, isScalar, type Document } from 'yaml';
import type { PodFacts } from '../manifest/pod-facts.ts';

const isEmpty = (v: unknown) => (Array.isArray(v) ? v.length === 0 : Object.keys(v as object).length === 0);

export function writeAnnotation(doc: Document, facts: PodFacts, key: string, value: unknown): void {
  const annotations = facts.annotationsNode ?? (value === undefined ? undefined : createAnnotations(doc, facts));
  if (!annotations) return;
  if (value === undefined || isEmpty(value)) {
    annotations.delete(key);
    // An annotations map that only held envhook's is removed with them.
    if (annotations.items.length === 0) facts.metadata?.delete('annotations');
    return;
  }
  const old = annotations.get(key, true);
  const block = isScalar(old) && (old.type === 'BLOCK_LITERAL' || old.type === 'BLOCK_FOLDED');
  const scalar = new Scalar(JSON.stringify(value) + (block ? '\n' : ''));
  scalar.type = block ? 'BLOCK_LITERAL' : isScalar(old) && old.type ? old.type : 'QUOTE_SINGLE';
  annotations.set(key, scalar);
}

function createAnnotations(doc: Document, facts: PodFacts): YAMLMap {
  const annotations = new YAMLMap();
  let metadata = facts.metadata;
  if (!metadata) {
    metadata = new YAMLMap();
    // Where people write it: just before `spec` (after apiVersion and kind; a pod template's
    // first key), or last when there is no spec.
    const items = facts.ref.pod.items;
    const spec = items.findIndex((p) => isScalar(p.key) && p.key.value === 'spec');
    items.splice(spec === -1 ? items.length : spec, 0, new Pair(doc.createNode('metadata'), metadata));
    facts.metadata = metadata;
  }
  metadata.set('annotations', annotations);
  facts.annotationsNode = annotations;
  return annotations;
}
