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

/** A complete JSON string (escapes included), or a run of JSON whitespace. */
export const STRING_OR_SPACE = /"[^"\\]*(?:\\[\s\S][^"\\]*)*"|[ \t\n\r]+/g;
const NUMBER = /[-0-9][-+.eE0-9]*/g;
const NOT_BRACKET = /[^[\]{}]+/g;

/**
 * The deepest nesting of arrays and objects in JSON text, outside its strings, and whether
 * every number token reads back as the same text (String(Number(t)) === t), so that a parse
 * without the lossless reviver gives the same values. Done with native regular-expression
 * passes, not a JavaScript loop over every character (interpreted at start-up, such a loop is
 * a visible share of a container start on a typical config.json): strings and whitespace are
 * dropped, and what is left (brackets, commas, colons, numbers, literals) is short. An
 * unterminated string runs to the end of the text, as JSON.parse will find. Malformed text may
 * give any answer for the numbers: JSON.parse rejects it on either path.
 */
export function scanJson(text: string): { depth: number; plainNumbers: boolean } {
  let skeleton = text.replace(STRING_OR_SPACE, '');
  const open = skeleton.indexOf('"');
  if (open >= 0) skeleton = skeleton.slice(0, open);
  let plainNumbers = true;
  for (const token of skeleton.match(NUMBER) ?? []) {
    if (String(Number(token)) !== token) {
      plainNumbers = false;
      break;
    }
  }
  const brackets = skeleton.replace(NOT_BRACKET, '');
  let depth = 0;
  let max = 0;
  for (let i = 0; i < brackets.length; i++) {
    const c = brackets.charCodeAt(i);
    if (c === 0x7b || c === 0x5b) {
      if (++depth > max) max = depth;
    } else depth--;
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
