// Validation in one place: every schema is compiled at build time (scripts/gen-validators.mjs);
// this module turns the outermost ajv error into one safe line naming the input and the JSON path.
// Messages carry schema facts (types, allowed names), never the data itself (no `verbose`).
// Validators stop at the first failing keyword (allErrors: false), and a failing oneOf/anyOf
// lists its branches' errors before its own: so the last error is the one to report. Lint's
// validators (allErrors) report every error: allSchemaErrors.
import { EnvhookError, SchemaError } from './errors.ts';
import { listenAddress } from './listen-address.ts';
import { didYouMean } from './nearest.ts';
import * as validators from './generated/validators.js';
import type { ValidateFunction, ValidationError } from './generated/validators.js';

/**
 * Human reasons for errors whose ajv message would be unhelpful ("must match pattern …", "must
 * match exactly one schema in oneOf"), keyed by keyword (`oneOf`, `propertyNames`) or by
 * `keyword:field` where field is the last non-index element of the JSON path (`pattern:path`).
 */
export type SchemaMessages = Readonly<Record<string, string>>;

const MAX_PATH = 200;

/**
 * Throws EnvhookError `<where>: <json path>: <reason>` unless `data` matches. `fields`: the
 * schema's field names, for the "did you mean" of an unknown field.
 */
export function check(
  validate: ValidateFunction,
  data: unknown,
  where: string,
  messages: SchemaMessages = {},
  fields: readonly string[] = [],
): void {
  if (validate(data)) return;
  const errors = validate.errors ?? [];
  let err = errors[errors.length - 1];
  // ajv runs oneOf/anyOf before `type`: when the branches failed on the data's type (an array
  // where an object belongs), the type is the error to report, not the combinator.
  if (err && (err.keyword === 'oneOf' || err.keyword === 'anyOf')) {
    const at = err.instancePath;
    err = errors.find((e) => e.keyword === 'type' && e.instancePath === at) ?? err;
  }
  if (!err) throw new EnvhookError(`${where}: invalid`);
  const { at, reason } = describeError(err, messages, fields, data);
  throw new SchemaError(where, at, reason);
}

/**
 * Every error of `data` against a validator compiled with allErrors (generated/validators-all.js:
 * `envhook lint`, which lists them all), one SchemaError each, as check() words its one: the
 * errors inside a oneOf/anyOf branch or a propertyNames subschema give way to the combinator's
 * own (which has the human message), a combinator that failed on the data's type to that type
 * error, and the same line is given once.
 */
export function allSchemaErrors(
  validate: ValidateFunction,
  data: unknown,
  where: string,
  messages: SchemaMessages = {},
  fields: readonly string[] = [],
): SchemaError[] {
  if (validate(data)) return [];
  const errors = (validate.errors ?? []).filter((e) => e.propertyName === undefined && !/\/(oneOf|anyOf)\/\d+\//.test(e.schemaPath));
  const typeAt = new Set(errors.filter((e) => e.keyword === 'type').map((e) => e.instancePath));
  const seen = new Set<string>();
  const out: SchemaError[] = [];
  for (const e of errors) {
    if ((e.keyword === 'oneOf' || e.keyword === 'anyOf') && typeAt.has(e.instancePath)) continue;
    const { at, reason } = describeError(e, messages, fields, data);
    if (seen.has(`${at}: ${reason}`)) continue;
    seen.add(`${at}: ${reason}`);
    out.push(new SchemaError(where, at, reason));
  }
  return out;
}

/** The JSON path (shortened) and the reason of one ajv error. */
function describeError(
  err: ValidationError,
  messages: SchemaMessages,
  fields: readonly string[],
  data: unknown,
): { at: string; reason: string } {
  let at = err.instancePath;
  const p = err.params;
  // propertyNames reports the object; point at the offending key instead.
  if (err.keyword === 'propertyNames' && typeof p.propertyName === 'string') at += '/' + escapePointer(p.propertyName);
  if (at.length > MAX_PATH) at = at.slice(0, MAX_PATH) + '…';
  if (at === '') at = '/';
  const field = err.instancePath
    .split('/')
    .reverse()
    .find((s) => s !== '' && !/^\d+$/.test(s));
  const custom = messages[`${err.keyword}:${field}`] ?? messages[err.keyword];
  return { at, reason: custom ?? genericReason(err, fields, data) };
}

function genericReason(err: ValidationError, fields: readonly string[], data: unknown): string {
  const p = err.params;
  if (err.keyword === 'required' && typeof p.missingProperty === 'string') return `missing field ${quoteName(p.missingProperty)}`;
  if (err.keyword === 'additionalProperties' && typeof p.additionalProperty === 'string') {
    // The nearest field the object does not have yet: `vaule` → "value" (lint says the same).
    const present = objectAt(data, err.instancePath);
    const candidates = fields.filter((f) => !Object.hasOwn(present, f));
    return `unknown field ${quoteName(p.additionalProperty)}${didYouMean(p.additionalProperty, candidates)}`;
  }
  // A regex says nothing to an admin: the inputs whose form matters have their reason in `messages`.
  if (err.keyword === 'pattern') return 'not in the form allowed here';
  if (err.keyword === 'enum' && Array.isArray(p.allowedValues))
    return `must be one of ${p.allowedValues.map((v) => JSON.stringify(v)).join(', ')}`;
  return err.message ?? err.keyword;
}

/** A field name from the input, quoted and cut short: it names, it does not reproduce. */
function quoteName(name: string): string {
  return JSON.stringify(name.length > 64 ? name.slice(0, 64) + '…' : name);
}

/** The object at a JSON pointer of `data` ({} when it is not one). */
function objectAt(data: unknown, pointer: string): object {
  let node = data;
  for (const part of pointer.split('/').slice(1)) {
    if (node === null || typeof node !== 'object') return {};
    node = (node as Record<string, unknown>)[part.replace(/~1/g, '/').replace(/~0/g, '~')];
  }
  return node !== null && typeof node === 'object' ? node : {};
}

function escapePointer(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}

export function validateSpec(spec: unknown, where: string): void {
  check(validators.validateOciSpec, spec, where);
}

export function validateState(state: unknown, where: string): void {
  check(validators.validateOciState, state, where);
}

/** The settings' patterns in words: an admin is never shown a regex. */
export const METRICS_ADDRESS_FORMS = 'expected host:port, [IPv6 or IPv4]:port or :port (every interface), port 0-65535';
const SETTINGS_MESSAGES: SchemaMessages = {
  'pattern:nriIndex': 'must be two digits, 00 to 99 (the order among NRI plugins)',
  'pattern:metricsAddress': METRICS_ADDRESS_FORMS,
};

export function validateSettingsFile(settings: unknown, where: string): void {
  check(validators.validateSettings, settings, where, SETTINGS_MESSAGES);
  // the pattern takes the shape; the host (an IP in brackets, a host name) is checked here, so a
  // bad one is refused naming the flag, variable or file as the pattern's refusals are
  const address = (settings as { metricsAddress?: unknown }).metricsAddress;
  if (typeof address === 'string' && !listenAddress(address)) throw new SchemaError(where, '/metricsAddress', METRICS_ADDRESS_FORMS);
}
