// Lossless JSON for config.json: every number whose source text would not survive a
// parse/stringify round trip (integers beyond 2^53 such as an rlimit of
// 18446744073709551615, or forms like 1.0 and 1e3) is kept as raw JSON text, and written
// back digit for digit by JSON.stringify.
import { EnvhookError } from '../errors.ts';

export type JsonValue = null | boolean | number | string | RawJSON | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

/**
 * Deeper than any real spec (OCI specs nest about 6 levels). The reviver and JSON.stringify
 * recurse, so a 10,000-level value would otherwise end in a RangeError, reported as invalid
 * JSON on load or as an internal error on flush.
 */
export const MAX_DEPTH = 512;

export function parseLossless(text: string, what: string): JsonValue {
  if (nestingDepth(text) > MAX_DEPTH) throw new EnvhookError(`${what} nests deeper than ${MAX_DEPTH} levels`);
  try {
    return JSON.parse(text, (_key, value, context) => {
      if (typeof value === 'number' && context.source !== undefined && String(value) !== context.source) {
        return JSON.rawJSON(context.source);
      }
      return value;
    }) as JsonValue;
  } catch (cause) {
    // V8's message quotes the input: report the position only.
    throw new EnvhookError(`${what} is not valid JSON${syntaxPosition(cause, text)}`, { cause: positionOnly(cause) });
  }
}

export function stringifyLossless(value: JsonValue, indent?: string | number): string {
  return JSON.stringify(value, null, indent);
}

/** The deepest nesting of arrays and objects in JSON text (strings skipped); a linear scan. */
export function nestingDepth(text: string): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) max = depth;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return max;
}

function syntaxPosition(cause: unknown, text: string): string {
  if (text.trim() === '') return ' (empty)';
  const m = cause instanceof Error ? /position (\d+)/.exec(cause.message) : null;
  if (m) return ` (at offset ${m[1]})`;
  if (cause instanceof Error && /Unexpected end of JSON input|Unterminated/.test(cause.message)) return ' (truncated)';
  return '';
}

function positionOnly(cause: unknown): Error {
  const e = new SyntaxError('JSON syntax error');
  if (cause instanceof Error) {
    const m = /position (\d+)/.exec(cause.message);
    if (m) e.message += ` at position ${m[1]}`;
  }
  return e;
}
