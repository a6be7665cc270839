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
 * (V8's JSON.parse quotes its input, for one), so only their name and code are shown; a system
 * error (a code such as ENOENT) is said in words with its call and path.
 */
export function describeError(err: unknown): string {
  if (err instanceof EnvhookError) return oneLine(err.message);
  if (err instanceof Error) {
    const e = err as NodeJS.ErrnoException;
    if (typeof e.code === 'string' && /^E[A-Z0-9]+$/.test(e.code)) return oneLine(`${systemCall(e)}: ${errnoReason(e)}`);
    return `internal error (${err.name}${e.code ? ` ${e.code}` : ''})`;
  }
  return 'internal error';
}

/** What a system error was doing: `cannot run PATH`, `mkdir PATH`, or the call alone. */
function systemCall(e: NodeJS.ErrnoException): string {
  const path = typeof e.path === 'string' ? e.path : undefined;
  if (e.syscall?.startsWith('spawn')) return `cannot run ${path ?? e.syscall.replace(/^spawn(Sync)? /, '')}`;
  const call = e.syscall ?? 'system call';
  return path === undefined ? call : `${call} ${path}`;
}

/**
 * System error codes in words: the one translation every message uses (`cannot read FILE: …`),
 * so no code reaches the admin alone. Where one thing helps, it is said.
 */
const ERRNO_WORDS: Readonly<Record<string, string>> = {
  ENOENT: 'no such file or directory',
  ENOTDIR: 'a part of the path is not a directory',
  EISDIR: 'is a directory, not a file',
  ERR_FS_EISDIR: 'is a directory, not a file',
  EEXIST: 'already exists',
  ENOTEMPTY: 'directory not empty',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EROFS: 'read-only file system',
  ENOSPC: 'no space left on the device',
  EDQUOT: 'disk quota exceeded',
  ELOOP: 'a symbolic link where none is followed, or too many of them',
  ENAMETOOLONG: 'name too long',
  EMFILE: 'too many open files in this process',
  ENFILE: 'too many open files in the system',
  EBUSY: 'device or resource busy',
  EXDEV: 'on another file system',
  EIO: 'input/output error',
  ENXIO: 'no such device or address (a FIFO without a reader, or a socket)',
  ENOEXEC: 'not an executable this system can run',
  EADDRINUSE: 'address already in use',
  EADDRNOTAVAIL: 'not an address of this host',
  ENOTFOUND: 'host name not found',
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset by the peer',
  ETIMEDOUT: 'timed out',
  EPIPE: 'broken pipe',
  EAGAIN: 'resource temporarily unavailable',
  EINVAL: 'invalid argument',
};

/** What to do, where one thing helps whatever the call was. */
const ERRNO_ADVICE: Readonly<Record<string, string>> = {
  EADDRINUSE: 'another process listens there; choose a free port or stop that process',
  EADDRNOTAVAIL: 'choose an address of this host',
  ECONNREFUSED: 'nothing listens there',
};

/** A system error's reason, for a message we write: words and the code (`no such file or directory (ENOENT)`), and what to do. */
export function errnoReason(err: unknown): string {
  const code = (err as NodeJS.ErrnoException | null | undefined)?.code;
  if (typeof code !== 'string' || code === '') return 'failed';
  const said = `${ERRNO_WORDS[code] ?? 'failed'} (${code})`;
  // Not root where root is needed: that is what to do. As root, the words alone (a read-only mount, a policy).
  if ((code === 'EACCES' || code === 'EPERM') && process.geteuid?.() !== 0) return `${said}: run as root`;
  const advice = ERRNO_ADVICE[code];
  return advice === undefined ? said : `${said}: ${advice}`;
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

/** Printable ASCII only: none of UNSEEN's characters (the common case, a hundred names a log line: tested without the Unicode scan). */
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

/** oneLine without the newline folding: every unseen character written as an escape. */
export function escapeUnseen(text: string): string {
  if (PRINTABLE_ASCII.test(text)) return text;
  return text.replace(UNSEEN, (c) => {
    const cp = c.codePointAt(0)!;
    return cp > 0xffff ? `\\u{${cp.toString(16)}}` : `\\u${cp.toString(16).padStart(4, '0')}`;
  });
}
