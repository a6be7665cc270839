// Every schema error of a pod author's annotation, for lint: the node stops at the first one
// (generated/validators.js, the container start path), lint lists them all with the validators
// compiled with allErrors, worded the same (k8s/annotation-schema.ts, which the node's refusal
// also uses, so that it says lint's line).
import type { SchemaError } from '../errors.ts';
import { parseLossless } from '../oci/json.ts';
import { everySchemaError as every } from '../k8s/annotation-schema.ts';

/**
 * The schema errors of annotation `key` whose text `value` the node's reader refused with a
 * SchemaError: all of them, or none when the schema passes (the reader's error was a rule
 * beside the schema, such as a volume listed twice, and stands alone).
 */
export function everySchemaError(key: string, value: string): SchemaError[] {
  const where = `annotation ${JSON.stringify(key)}`;
  return every(key, parseLossless(value, where), where);
}
