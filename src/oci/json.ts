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
  const { depth, plainNumbers } = scanJson(text);
  if (depth > MAX_DEPTH) throw new EnvhookError(`${what} nests deeper than ${MAX_DEPTH} levels`);
  try {
    // The reviver is what keeps odd numbers raw, but it runs for every value (35,000 env
    // strings in a large spec): when the scan saw only numbers that round-trip, a plain parse
    // gives the same result at a fraction of the cost.
    if (plainNumbers) return JSON.parse(text) as JsonValue;
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
  return scanJson(text).depth;
}

/**
 * One linear scan of JSON text outside its strings: the deepest nesting of arrays and objects,
 * and whether every number token reads back as the same text (String(Number(t)) === t), so
 * that a parse without the lossless reviver gives the same values. Malformed text may give
 * any answer here: JSON.parse rejects it either way.
 */
export function scanJson(text: string): { depth: number; plainNumbers: boolean } {
  let depth = 0;
  let max = 0;
  let plainNumbers = true;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // Skip the string: the next quote not escaped by an odd run of backslashes.
      let end = text.indexOf('"', i + 1);
      while (end > 0) {
        let slashes = 0;
        while (text.charCodeAt(end - 1 - slashes) === 0x5c) slashes++;
        if (slashes % 2 === 0) break;
        end = text.indexOf('"', end + 1);
      }
      if (end < 0) break;
      i = end;
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) max = depth;
    } else if (c === 0x7d || c === 0x5d) depth--;
    else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      let j = i + 1;
      for (; j < n; j++) {
        const d = text.charCodeAt(j);
        if (!((d >= 0x30 && d <= 0x39) || d === 0x2e || d === 0x65 || d === 0x45 || d === 0x2b || d === 0x2d)) break;
      }
      if (plainNumbers) {
        const token = text.slice(i, j);
        if (String(Number(token)) !== token) plainNumbers = false;
      }
      i = j - 1;
    }
  }
  return { depth: max, plainNumbers };
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
