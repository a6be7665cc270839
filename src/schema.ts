// Validation in one place: every schema is compiled at build time (scripts/gen-validators.mjs);
// this module turns the first ajv error into one safe line naming the input and the JSON path.
// Messages carry schema facts (types, allowed names), never the data itself (no `verbose`).
import { EnvhookError } from './errors.ts';
import * as validators from './generated/validators.js';
import type { ValidateFunction, ValidationError } from './generated/validators.js';

export type ValidatorName = Exclude<keyof typeof validators, 'default'>;

/** Throws EnvhookError `<where>: <json path>: <reason>` unless `data` matches. */
export function check(validate: ValidateFunction, data: unknown, where: string): void {
  if (validate(data)) return;
  const err = validate.errors?.[0];
  throw new EnvhookError(`${where}: ${err ? formatError(err) : 'invalid'}`);
}

export function formatError(err: ValidationError): string {
  const at = err.instancePath === '' ? '/' : err.instancePath;
  let reason = err.message ?? err.keyword;
  const p = err.params;
  if (err.keyword === 'additionalProperties' && typeof p.additionalProperty === 'string') {
    reason = `unknown field ${JSON.stringify(p.additionalProperty)}`;
  } else if (err.keyword === 'enum' && Array.isArray(p.allowedValues)) {
    reason = `must be one of ${p.allowedValues.map((v) => JSON.stringify(v)).join(', ')}`;
  }
  return `${at}: ${reason}`;
}

export function validateSpec(spec: unknown, where: string): void {
  check(validators.validateOciSpec, spec, where);
}

export function validateState(state: unknown, where: string): void {
  check(validators.validateOciState, state, where);
}

export function validateSettingsFile(settings: unknown, where: string): void {
  check(validators.validateSettings, settings, where);
}
