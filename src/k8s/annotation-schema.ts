// How the pod author's annotations' schema errors are worded, on the node and by `envhook lint`
// alike (docs/pods.md#limits-and-validation): the human reasons, the field names an unknown
// field is matched against ("did you mean"), and the node's refusal, which is lint's first line.
// The node's validators stop at the first error; on that (failure) path only, the allErrors
// validators lint uses find them all, so the refusal names the one lint puts first.
import { SchemaError } from '../errors.ts';
import { allSchemaErrors, type SchemaMessages } from '../schema.ts';
import { FIELD_NAMES } from '../generated/fields.js';
import {
  validateEnvAnnotation,
  validateEnvFromAnnotation,
  validateServiceLinksAnnotation,
  validateVolumeOwners,
  type ValidateFunction,
} from '../generated/validators-all.js';
import { ENV_FROM_KEY, ENV_KEY, SERVICE_LINKS_KEY, VOLUME_OWNERS } from './annotation-keys.ts';

const DNS_LABEL = "a DNS label: lowercase letters, digits and '-', at most 63 characters";
const RELAXED_NAME = "must be printable ASCII without '='";
const MESSAGES: SchemaMessages = {
  oneOf: 'must have exactly one of "value" or "valueFrom"',
  propertyNames: `container name must be ${DNS_LABEL}`,
  'pattern:volumeName': `must be ${DNS_LABEL}`,
  'pattern:path': "must be a relative path with no '..' element and no NUL byte",
  'pattern:name': RELAXED_NAME,
  'pattern:prefix': RELAXED_NAME,
  'pattern:key': 'must be a variable name ([A-Za-z_][A-Za-z0-9_]*)',
  'pattern:value': 'must not contain a NUL byte',
  'minProperties:valueFrom': 'must have exactly one of "fileKeyRef" or "fileRef"',
  'maxProperties:valueFrom': 'must have exactly one of "fileKeyRef" or "fileRef"',
};
const ENV_FROM_MESSAGES: SchemaMessages = { ...MESSAGES, oneOf: 'must have exactly one of "fileRef" or "volumeRef"' };
const SERVICE_LINKS_MESSAGES: SchemaMessages = { propertyNames: `container name must be "*" or ${DNS_LABEL}` };

/** The human reasons for schema errors of annotation `key` (lint words its errors the same way). */
export function schemaMessages(key: string): SchemaMessages {
  if (key === ENV_KEY) return MESSAGES;
  if (key === ENV_FROM_KEY) return ENV_FROM_MESSAGES;
  if (key === SERVICE_LINKS_KEY) return SERVICE_LINKS_MESSAGES;
  return {};
}

/** The schema's field names of annotation `key`, for the "did you mean" of an unknown field. */
export function schemaFields(key: string): readonly string[] {
  return FIELD_NAMES[SCHEMAS[key]?.base ?? ''] ?? [];
}

const SCHEMAS: Readonly<Record<string, { base: string; all: ValidateFunction }>> = {
  [ENV_KEY]: { base: 'env-annotation', all: validateEnvAnnotation },
  [ENV_FROM_KEY]: { base: 'env-from-annotation', all: validateEnvFromAnnotation },
  [SERVICE_LINKS_KEY]: { base: 'service-links-annotation', all: validateServiceLinksAnnotation },
  [VOLUME_OWNERS]: { base: 'volume-owners', all: validateVolumeOwners },
};

/** Every schema error of annotation `key`'s parsed value `data`, one line each, as lint lists them. */
export function everySchemaError(key: string, data: unknown, where: string): SchemaError[] {
  const schema = SCHEMAS[key];
  return schema ? allSchemaErrors(schema.all, data, where, schemaMessages(key), schemaFields(key)) : [];
}

/**
 * The node's refusal of annotation `key` (its first error was `first`): lint's line for it, an
 * unknown field first (a misspelt field is why its object fails the rest), and how many more
 * lint lists.
 */
export function lintsRefusal(key: string, data: unknown, where: string, first: SchemaError): SchemaError {
  const all = everySchemaError(key, data, where);
  if (all.length === 0) return first;
  const lead = all.find((e) => e.reason.startsWith('unknown field ')) ?? all[0]!;
  const more = all.length - 1;
  return new SchemaError(where, lead.at, more > 0 ? `${lead.reason} (and ${more} more: envhook lint lists them)` : lead.reason);
}
