// `envhook lint`: every pod of a manifest, its envhook.io/* annotations against the node's JSON
// Schemas, then against the rest of the pod (cross.ts), then the runtime class the node needs.
import { isScalar } from 'yaml';
import type { Manifest } from '../manifest/read.ts';
import { positionAt } from '../manifest/read.ts';
import { podsOf } from '../manifest/pods.ts';
import { pairFor, podFacts, type PodFacts } from '../manifest/pod-facts.ts';
import { getMap, offsetOf, pairOf } from '../manifest/nodes.ts';
import type { Finding, Severity } from './finding.ts';
import { readPodAnnotations } from './read-annotations.ts';
import { crossCheck } from './cross.ts';
import { ENVHOOK_PREFIX, EVICT_KEY } from '../k8s/annotation-keys.ts';

export type Mode = 'shim' | 'nri';
/** The runtime class `envhook install` registers (convert --to native removes it with the last annotation). */
export const RUNTIME_CLASS = 'envhook';

export interface LintOptions {
  mode: Mode;
}

export function lintManifest(m: Manifest, opts: LintOptions): Finding[] {
  const out: Finding[] = [];
  const at = (offset: number, severity: Severity, annotation: string, path: string, message: string) =>
    out.push({ file: m.file, ...positionAt(m, offset), severity, annotation, path, message });
  for (const doc of m.docs) {
    // A syntax error: report it where the parser found it, in the parser's own words (they
    // describe the syntax, not the text), and skip the document.
    if (doc.errors.length > 0) {
      // The first only: the ones after it are mostly its consequences.
      const e = doc.errors[0]!;
      at(e.pos[0], 'error', 'yaml', '', syntaxMessage(e.code));
      continue;
    }
    for (const ref of podsOf(doc)) {
      const facts = podFacts(ref);
      lintPod(facts, opts, at);
      // Annotations on a workload's own metadata never reach its pods.
      if (ref.object !== ref.pod) {
        const meta = getMap(ref.object, 'metadata');
        const own = meta && getMap(meta, 'annotations');
        for (const pair of own?.items ?? []) {
          if (isScalar(pair.key) && String(pair.key.value).startsWith(ENVHOOK_PREFIX)) {
            at(
              offsetOf(pair),
              'warning',
              String(pair.key.value),
              '',
              `on the ${ref.kind}'s own metadata, which its pods do not get: put it under the pod template's metadata.annotations`,
            );
          }
        }
      }
    }
  }
  // In file order; findings on one line keep the order the checks made them.
  return out.sort((x, y) => x.line - y.line || x.column - y.column);
}

type At = (offset: number, severity: Severity, annotation: string, path: string, message: string) => void;

function lintPod(facts: PodFacts, opts: LintOptions, at: At): void {
  if (facts.annotations.size === 0) return;
  const { values, problems } = readPodAnnotations(facts);
  // Cross-checks only on annotations that passed their schema: no cascade of findings.
  for (const p of [...problems, ...crossCheck(facts, values)]) at(offsetOf(pairFor(facts, p.key)), p.severity, p.key, p.path, p.message);
  if (opts.mode !== 'shim') return;
  if (facts.annotations.has(EVICT_KEY)) {
    at(
      offsetOf(pairFor(facts, EVICT_KEY)),
      'warning',
      EVICT_KEY,
      '',
      'read by envhook nri only: in shim mode the runtime handler applies env at every start, so no container is missed',
    );
    // Alone, it asks nothing of the runtime handler.
    if (facts.annotations.size === 1) return;
  }
  const pair = facts.spec && pairOf(facts.spec, 'runtimeClassName');
  const where = offsetOf(pair ?? pairOf(facts.ref.pod, 'spec') ?? facts.ref.pod);
  const value = pair && isScalar(pair.value) ? pair.value.value : undefined;
  if (value === undefined || value === null || value === '') {
    at(
      where,
      'error',
      'spec.runtimeClassName',
      '',
      `missing: a pod with envhook annotations needs runtimeClassName: ${RUNTIME_CLASS} in shim mode (containerd passes envhook.io/* annotations to that handler only; use --mode nri for nodes that run envhook nri)`,
    );
  } else if (value !== RUNTIME_CLASS) {
    at(
      where,
      'warning',
      'spec.runtimeClassName',
      '',
      `not "${RUNTIME_CLASS}", the handler envhook install registers: the node must pass envhook.io/* annotations to this one`,
    );
  }
}

/** The yaml parser's error code in words; its message may quote the source. */
function syntaxMessage(code: string): string {
  return `not valid YAML or JSON (${code.toLowerCase().replace(/_/g, ' ')})`;
}
