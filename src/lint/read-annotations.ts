// The envhook.io/* annotations of one pod, read with the node's own readers (same JSON Schemas,
// same messages): each valid one parsed, each invalid one a finding. Shared by lint and convert.
import { EnvhookError, SchemaError } from '../errors.ts';
import { readEnv, readEnvFrom, readServiceLinks, type EnvFromSource, type EnvVar } from '../k8s/annotations.ts';
import { readVolumeOwners, type VolumeOwner } from '../ownership/annotation.ts';
import type { PodFacts } from '../manifest/pod-facts.ts';
import { didYouMean } from '../nearest.ts';
import { everySchemaError } from './schema-errors.ts';
import {
  APPLIED_KEY,
  ENV_FROM_KEY,
  ENV_KEY,
  EVICT_KEY,
  POD_AUTHOR_KEYS,
  SERVICE_LINKS_KEY,
  VOLUME_OWNERS,
} from '../k8s/annotation-keys.ts';

export interface PodAnnotations {
  env?: Record<string, EnvVar[]>;
  envFrom?: Record<string, EnvFromSource[]>;
  serviceLinks?: Record<string, boolean>;
  owners?: VolumeOwner[];
  /** The raw volumeOwners entries (convert writes them back as written). */
  ownersRaw?: { volume: string; defaultUser?: number; items?: { path: string; user: number }[] }[];
}

/** A problem with one annotation as a whole or at a JSON path in it. */
export interface AnnotationProblem {
  key: string;
  path: string;
  message: string;
  severity: 'error' | 'warning';
}

export function readPodAnnotations(facts: PodFacts): { values: PodAnnotations; problems: AnnotationProblem[] } {
  const values: PodAnnotations = {};
  const problems: AnnotationProblem[] = [];
  for (const [key, { value }] of facts.annotations) {
    // The readers take the annotations as the runtime passes them: a record of strings. A
    // non-string (a YAML map written where the JSON text belongs) reaches them as is and is
    // refused there ("must be a string").
    const record = { [key]: value } as Record<string, string>;
    try {
      if (key === ENV_KEY) values.env = readEnv(record);
      else if (key === ENV_FROM_KEY) values.envFrom = readEnvFrom(record);
      else if (key === SERVICE_LINKS_KEY) values.serviceLinks = readServiceLinks(record);
      else if (key === VOLUME_OWNERS) {
        values.owners = readVolumeOwners(record);
        values.ownersRaw = JSON.parse(value as string);
      } else if (key === EVICT_KEY) {
        // The node reads only the string "true"; Kubernetes refuses an annotation that is not a string.
        if (typeof value !== 'string') problems.push({ key, path: '', severity: 'error', message: 'must be a string: "true" (quoted)' });
        else if (value !== 'true' && value !== 'false')
          problems.push({
            key,
            path: '',
            severity: 'warning',
            message: 'only "true" asks for eviction: any other value is the same as "false"',
          });
      } else if (key === APPLIED_KEY) {
        problems.push({
          key,
          path: '',
          severity: 'warning',
          message: 'set by envhook on the node after it applied env; a pod should not carry it',
        });
      } else {
        problems.push({ key, path: '', severity: 'error', message: `not an envhook annotation${didYouMean(key, POD_AUTHOR_KEYS)}` });
      }
    } catch (err) {
      // The reader stops at the first schema error; lint lists every one of the annotation.
      const all = err instanceof SchemaError && typeof value === 'string' ? everySchemaError(key, value) : [];
      if (all.length > 0) problems.push(...all.map((e) => describe(key, e)));
      else problems.push(describe(key, err));
    }
  }
  return { values, problems };
}

function describe(key: string, err: unknown): AnnotationProblem {
  if (err instanceof SchemaError) return { key, path: err.at, message: err.reason, severity: 'error' };
  if (err instanceof EnvhookError) {
    // `annotation "K": must be a string`, `annotation "K" is not valid JSON (at offset N)`.
    const prefix = `annotation ${JSON.stringify(key)}`;
    const rest = err.message.startsWith(prefix) ? err.message.slice(prefix.length).replace(/^:? /, '') : err.message;
    return { key, path: '', message: rest, severity: 'error' };
  }
  throw err;
}
