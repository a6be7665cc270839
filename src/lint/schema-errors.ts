// Every schema error of a pod author's annotation, for lint: the node stops at the first one
// (generated/validators.js, the container start path), lint lists them all with the validators
// compiled with allErrors (generated/validators-all.js, loaded by lint only), worded the same.
import type { SchemaError } from '../errors.ts';
import { allSchemaErrors } from '../schema.ts';
import { parseLossless } from '../oci/json.ts';
import { schemaMessages } from '../k8s/annotations.ts';
import { ENV_FROM_KEY, ENV_KEY, SERVICE_LINKS_KEY, VOLUME_OWNERS } from '../k8s/annotation-keys.ts';
import {
  validateEnvAnnotation,
  validateEnvFromAnnotation,
  validateServiceLinksAnnotation,
  validateVolumeOwners,
  type ValidateFunction,
} from '../generated/validators-all.js';

const VALIDATORS: Readonly<Record<string, ValidateFunction>> = {
  [ENV_KEY]: validateEnvAnnotation,
  [ENV_FROM_KEY]: validateEnvFromAnnotation,
  [SERVICE_LINKS_KEY]: validateServiceLinksAnnotation,
  [VOLUME_OWNERS]: validateVolumeOwners,
};

/**
 * The schema errors of annotation `key` whose text `value` the node's reader refused with a
 * SchemaError: all of them, or none when the schema passes (the reader's error was a rule
 * beside the schema, such as a volume listed twice, and stands alone).
 */
export function everySchemaError(key: string, value: string): SchemaError[] {
  const validate = VALIDATORS[key];
  if (validate === undefined) return [];
  const where = `annotation ${JSON.stringify(key)}`;
  return allSchemaErrors(validate, parseLossless(value, where), where, schemaMessages(key));
}
