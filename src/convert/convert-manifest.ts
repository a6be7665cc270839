// `envhook convert`: one manifest to the other form. Documents that did not change are written
// back as their exact source text; changed ones through the yaml Document API (comments, key
// order and scalar styles kept). JSON input is written back as JSON.
import { EnvhookError } from '../errors.ts';
import type { Manifest } from '../manifest/read.ts';
import { positionAt } from '../manifest/read.ts';
import { podsOf } from '../manifest/pods.ts';
import { pairFor, podFacts } from '../manifest/pod-facts.ts';
import { offsetOf } from '../manifest/nodes.ts';
import { readPodAnnotations } from '../lint/read-annotations.ts';
import { formatFinding } from '../lint/finding.ts';
import { crossCheck } from '../lint/cross.ts';
import { toNative } from './to-native.ts';
import { toAnnotations } from './to-annotations.ts';
import type { Note } from './note.ts';

export type Target = 'native' | 'annotations';

export function convertManifest(m: Manifest, to: Target): { text: string; notes: Note[]; changed: boolean } {
  const notes: Note[] = [];
  const parts: string[] = [];
  let changed = false;
  let last = 0;
  m.docs.forEach((doc, i) => {
    const end = i === m.docs.length - 1 ? m.text.length : doc.range[2];
    if (doc.errors.length > 0) {
      const pos = positionAt(m, doc.errors[0]!.pos[0]);
      throw new EnvhookError(`${m.file}:${pos.line}:${pos.column}: not valid YAML or JSON: run envhook lint`);
    }
    let docChanged = false;
    for (const ref of podsOf(doc)) {
      const facts = podFacts(ref);
      const { values, problems } = readPodAnnotations(facts);
      // Converting what lint rejects (an annotation the node would refuse, a volume or container
      // the pod lacks) would only move the mistake: the same checks as lint's, the runtime
      // class aside (it depends on the node's mode, and a converted pod may not need it).
      const errors = [...problems, ...crossCheck(facts, values)].filter((p) => p.severity === 'error');
      if (errors.length > 0) {
        const bad = errors[0]!;
        const where = positionAt(m, offsetOf(pairFor(facts, bad.key)));
        const fix = errors.length > 1 ? `and ${errors.length - 1} more: fix them first: envhook lint` : 'fix it first: envhook lint';
        throw new EnvhookError(
          `${formatFinding({ file: m.file, ...where, severity: 'error', annotation: bad.key, path: bad.path, message: bad.message })} (${fix})`,
        );
      }
      const note = (annotation: string, path: string, message: string, offset?: number) =>
        notes.push({
          file: m.file,
          ...positionAt(m, offset ?? offsetOf(pairFor(facts, annotation) ?? ref.pod)),
          annotation,
          path,
          message,
        });
      const did = to === 'native' ? toNative(doc, facts, values, note) : toAnnotations(doc, facts, values, note);
      docChanged = did || docChanged;
    }
    parts.push(docChanged ? doc.toString({ lineWidth: 0, flowCollectionPadding: false }) : m.text.slice(last, end));
    changed = docChanged || changed;
    last = end;
  });
  if (!changed) return { text: m.text, notes, changed };
  if (m.json) {
    // One JSON value in, one out: the documents' data, two-space indented as kubectl writes it.
    const values = m.docs.map((d) => d.toJS());
    return { text: `${JSON.stringify(values.length === 1 ? values[0] : values, null, 2)}\n`, notes, changed };
  }
  return { text: parts.join(''), notes, changed };
}
