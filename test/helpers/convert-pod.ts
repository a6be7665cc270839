// One pod's YAML read as lint reads it (podOf), or through one direction of convert, called directly (no convertManifest): the
// changed flag, the document written back, and the notes as (annotation, path, message).
import { parseDocument } from 'yaml';
import { podsOf } from '../../src/manifest/pods.ts';
import { podFacts, type PodFacts } from '../../src/manifest/pod-facts.ts';
import { readPodAnnotations, type PodAnnotations } from '../../src/lint/read-annotations.ts';
import type { Noter } from '../../src/convert/note.ts';

export type Direction = (doc: ReturnType<typeof parseDocument>, facts: PodFacts, a: PodAnnotations, note: Noter) => boolean;

/** The first pod of a YAML document: its facts and its annotations as lint reads them. */
export function podOf(yaml: string) {
  const doc = parseDocument(yaml);
  const [ref] = podsOf(doc);
  const facts = podFacts(ref!);
  const { values, problems } = readPodAnnotations(facts);
  if (problems.some((p) => p.severity === 'error')) throw new Error(`fixture has annotation errors: ${JSON.stringify(problems)}`);
  return { doc, facts, values };
}

export function convertPod(direction: Direction, yaml: string) {
  const { doc, facts, values } = podOf(yaml);
  const notes: { annotation: string; path: string; message: string }[] = [];
  const changed = direction(doc, facts, values, (annotation, path, message) => notes.push({ annotation, path, message }));
  return { changed, notes, out: doc.toJS() as Record<string, any>, text: doc.toString({ lineWidth: 0 }) };
}
