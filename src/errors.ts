// Every error envhook reports is an EnvhookError: its message is written by us and is safe to
// print (names, paths, line numbers — never a byte of an env file or a resolved value).
// The original error stays attached as `cause` for the log file.

export class EnvhookError extends Error {
  override name = 'EnvhookError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** A rejected env file: `line` is 1-based, `reason` a short fixed phrase. */
export class EnvFileError extends EnvhookError {
  override name = 'EnvFileError';
  readonly line: number;
  readonly reason: string;
  constructor(line: number, reason: string) {
    super(line > 0 ? `line ${line}: ${reason}` : reason);
    this.line = line;
    this.reason = reason;
  }
}

/**
 * An input that does not match its schema (or a rule checked beside it): `where` names the
 * input, `at` the JSON path, `reason` what is wrong. Kept apart so `envhook lint` can report
 * the path and the reason as fields, with the same text the node prints.
 */
export class SchemaError extends EnvhookError {
  override name = 'SchemaError';
  readonly where: string;
  readonly at: string;
  readonly reason: string;
  constructor(where: string, at: string, reason: string) {
    super(`${where}: ${at}: ${reason}`);
    this.where = where;
    this.at = at;
    this.reason = reason;
  }
}

/**
 * The one line printed after `envhook: `. Messages of foreign errors are not trusted
 * (V8's JSON.parse quotes its input, for one), so only their name and code are shown.
 */
export function describeError(err: unknown): string {
  if (err instanceof EnvhookError) return oneLine(err.message);
  if (err instanceof Error) {
    const code = (err as NodeJS.ErrnoException).code;
    return `internal error (${err.name}${code ? ` ${code}` : ''})`;
  }
  return 'internal error';
}

/** Safe, structured form of an error chain for the log file: names, codes, syscalls, paths. */
export function serializeCause(err: unknown, depth = 0): Record<string, unknown> | undefined {
  if (!(err instanceof Error) || depth > 8) return undefined;
  const e = err as NodeJS.ErrnoException;
  const out: Record<string, unknown> = { name: e.name };
  if (err instanceof EnvhookError) out.message = escapeUnseen(err.message);
  if (e.code) out.code = e.code;
  if (e.syscall) out.syscall = e.syscall;
  if (e.path) out.path = escapeUnseen(e.path);
  const cause = serializeCause(e.cause, depth + 1);
  if (cause) out.cause = cause;
  return out;
}

/**
 * One line, and no character that changes what a terminal shows: names and keys from an
 * annotation reach messages, and a terminal escape (ESC, BEL), a line separator, or a Unicode
 * format character (bidi overrides and isolates such as U+202E and U+2066, zero-width spaces,
 * U+FEFF: category Cf) must not reach the admin's terminal, the kubelet's event or containerd's
 * log as such. Each is written `\uXXXX` (`\u{XXXXX}` beyond the BMP); a lone surrogate too.
 */
export function oneLine(text: string): string {
  return escapeUnseen(text.replace(/[\r\n]+/g, ' '));
}

/** C0 and C1 controls, format characters (Cf), line and paragraph separators, lone surrogates. */
const UNSEEN = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/gu;

/** oneLine without the newline folding: every unseen character written as an escape. */
export function escapeUnseen(text: string): string {
  return text.replace(UNSEEN, (c) => {
    const cp = c.codePointAt(0)!;
    return cp > 0xffff ? `\\u{${cp.toString(16)}}` : `\\u${cp.toString(16).padStart(4, '0')}`;
  });
}
