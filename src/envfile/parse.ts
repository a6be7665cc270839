// The KEP-3721 env-file parser (docs/design.md#env-files). An accepted file yields exactly the variables that
// `bash --posix -c 'set -a; . FILE'` sets; anything bash would read differently, and anything
// over the limits, is rejected with a line number and a fixed reason (syntax.ts), never with a
// byte of the file. It runs on every container start: one linear pass over the bytes.
//
// UTF-8: bash keeps a value's bytes as they are, but the value ends up in config.json's
// process.env, a JSON string, which cannot hold invalid UTF-8 (Node would silently turn it into
// U+FFFD). So a value that is not valid UTF-8 (strict WHATWG rules: no overlong forms, no
// surrogates, no truncated sequences) is rejected with Reason.InvalidUtf8. Comments are skipped
// as bytes: they never leave the file, so their encoding does not matter. A U+FEFF inside a value
// is kept; only a byte-order mark at the start of the file is rejected.
import { EnvFileError } from '../errors.ts';
import { isBlank, isNameByte, isNameStart, MAX_FILE_BYTES, MAX_NAME_CHARS, MAX_VALUE_BYTES, Reason } from './syntax.ts';

const LF = 0x0a;
const CR = 0x0d;
const HASH = 0x23;
const QUOTE = 0x27;
const EQUALS = 0x3d;

// ignoreBOM: true keeps a leading U+FEFF of a value instead of silently dropping it.
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Parse a whole env file; the last definition of a name wins. Throws EnvFileError. */
export function parseEnvFile(bytes: Uint8Array): Map<string, string> {
  if (bytes.length > MAX_FILE_BYTES) throw new EnvFileError(0, Reason.FileTooLarge);
  if (hasByteOrderMark(bytes)) throw new EnvFileError(1, Reason.ByteOrderMark);
  const nul = bytes.indexOf(0);
  if (nul >= 0) throw new EnvFileError(lineAt(bytes, nul), Reason.NulByte);

  const vars = new Map<string, string>();
  const n = bytes.length;
  let line = 1;
  let i = 0;
  while (i < n) {
    // At the start of a physical line (or at the LF that ends the previous statement).
    while (i < n && isBlank(bytes[i]!)) i++;
    if (i === n) break;
    const first = bytes[i]!;
    if (first === LF) {
      i++;
      line++;
      continue;
    }
    if (first === HASH) {
      i = skipComment(bytes, i, line);
      continue;
    }
    if (first === CR) throw new EnvFileError(line, Reason.CarriageReturn);

    const nameStart = i;
    while (i < n && isNameByte(bytes[i]!)) i++;
    if (i === n || bytes[i] !== EQUALS) throw new EnvFileError(line, notAnAssignment(bytes, nameStart, i));
    if (i === nameStart) throw new EnvFileError(line, Reason.EmptyName);
    if (!isNameStart(bytes[nameStart]!)) throw new EnvFileError(line, Reason.InvalidName);
    if (i - nameStart > MAX_NAME_CHARS) throw new EnvFileError(line, Reason.NameTooLong);
    const name = utf8.decode(bytes.subarray(nameStart, i));

    i++; // '='
    if (bytes[i] !== QUOTE) throw new EnvFileError(line, bytes[i] === CR ? Reason.CarriageReturn : Reason.NotQuoted);
    const valueStart = ++i;
    const valueLine = line;
    const close = bytes.indexOf(QUOTE, valueStart);
    if (close < 0) throw new EnvFileError(valueLine, Reason.UnclosedQuote);
    if (close - valueStart > MAX_VALUE_BYTES) throw new EnvFileError(valueLine, Reason.ValueTooLong);
    for (; i < close; i++) if (bytes[i] === LF) line++;
    vars.set(name, decodeValue(bytes, valueStart, close, valueLine));

    // After the closing quote: nothing, or blanks, or blanks and a comment.
    i = close + 1;
    if (i < n && bytes[i] === QUOTE) throw new EnvFileError(line, Reason.AdjacentQuotes);
    const blanksFrom = i;
    while (i < n && isBlank(bytes[i]!)) i++;
    if (i === n || bytes[i] === LF) continue;
    if (bytes[i] === HASH && i > blanksFrom) i = skipComment(bytes, i, line);
    else throw new EnvFileError(line, bytes[i] === CR ? Reason.CarriageReturn : Reason.TextAfterQuote);
  }
  return vars;
}

/** UTF-8 (EF BB BF) or UTF-16 (FF FE, FE FF) byte-order mark. */
function hasByteOrderMark(b: Uint8Array): boolean {
  return (b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf) || (b[0] === 0xff && b[1] === 0xfe) || (b[0] === 0xfe && b[1] === 0xff);
}

/** Skip a comment up to (not past) its LF. A CR is refused here too: CRLF files are refused. */
function skipComment(bytes: Uint8Array, i: number, line: number): number {
  for (; i < bytes.length && bytes[i] !== LF; i++) {
    if (bytes[i] === CR) throw new EnvFileError(line, Reason.CarriageReturn);
  }
  return i;
}

/**
 * Why a line that is neither blank nor a comment is not `NAME=`: `bytes[start, end)` is the
 * run of name bytes (possibly empty) and `bytes[end]` is not `=`.
 */
function notAnAssignment(bytes: Uint8Array, start: number, end: number): Reason {
  if (bytes[end] === CR) return Reason.CarriageReturn;
  let onlyBlanks = true;
  for (let k = end; k < bytes.length && bytes[k] !== LF; k++) {
    if (bytes[k] === EQUALS) {
      if (onlyBlanks && isNameStart(bytes[start]!)) return Reason.BlankBeforeEquals;
      return isExport(bytes, start, end) ? Reason.Export : Reason.InvalidName;
    }
    if (!isBlank(bytes[k]!)) onlyBlanks = false;
  }
  return Reason.MissingEquals;
}

const EXPORT = [0x65, 0x78, 0x70, 0x6f, 0x72, 0x74]; // 'export'

/** `export` then a blank: `export NAME='v'` (the caller has seen an `=` later on the line). */
function isExport(bytes: Uint8Array, start: number, end: number): boolean {
  return end - start === EXPORT.length && EXPORT.every((b, k) => bytes[start + k] === b) && isBlank(bytes[end]!);
}

function decodeValue(bytes: Uint8Array, start: number, end: number, line: number): string {
  try {
    return utf8.decode(bytes.subarray(start, end));
  } catch {
    // Error path only: find the offending byte for its line number. A streaming decoder rejects
    // every prefix that holds a complete bad sequence, so the shortest rejected prefix ends
    // there; a sequence cut short by the closing quote is only seen at the very end.
    let lo = start + 1;
    let hi = end;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (rejects(bytes.subarray(start, mid))) hi = mid;
      else lo = mid + 1;
    }
    throw new EnvFileError(line + countLines(bytes, start, lo - 1), Reason.InvalidUtf8);
  }
}

function rejects(prefix: Uint8Array): boolean {
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(prefix, { stream: true });
    return false;
  } catch {
    return true;
  }
}

function countLines(bytes: Uint8Array, from: number, to: number): number {
  let lines = 0;
  for (let k = from; k < to; k++) if (bytes[k] === LF) lines++;
  return lines;
}

function lineAt(bytes: Uint8Array, offset: number): number {
  return 1 + countLines(bytes, 0, offset);
}
