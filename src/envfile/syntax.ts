// The fixed vocabulary of the env-file format (docs/design.md#env-files): limits, the byte classes bash uses,
// and the reason phrases of EnvFileError. Reasons are constants so that no byte of a file can
// ever reach a message: the parser only ever reports one of these, with a line number.

/** Limits, each inclusive: a file, name or value of exactly this size is accepted. */
export const MAX_FILE_BYTES = 65536;
export const MAX_NAME_CHARS = 128;
export const MAX_VALUE_BYTES = 32768;

/**
 * What bash's parser counts as a blank between words: space and tab, nothing else. A form
 * feed, vertical tab or carriage return is an ordinary word character to bash (`\fA='x'` is a
 * command named `\fA=x`), so none of them may stand where a blank is allowed.
 */
export const BLANKS = ' \t';
export function isBlank(byte: number): boolean {
  return byte === 0x20 || byte === 0x09;
}

/** A variable name, as bash (and POSIX) reads an assignment word: `[A-Za-z_][A-Za-z0-9_]*`. */
export const NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/;
export function isNameStart(byte: number): boolean {
  return (byte >= 0x41 && byte <= 0x5a) || (byte >= 0x61 && byte <= 0x7a) || byte === 0x5f;
}
export function isNameByte(byte: number): boolean {
  return isNameStart(byte) || (byte >= 0x30 && byte <= 0x39);
}

/** Every reason an env file can be rejected for; one per rejection class of docs/design.md#env-files. */
export const Reason = {
  /** A line that is not blank, not a comment and has no `=`. */
  MissingEquals: "missing '='",
  /** `='v'` */
  EmptyName: 'empty variable name',
  /** A name that is not `[A-Za-z_][A-Za-z0-9_]*`. */
  InvalidName: 'invalid variable name',
  /** `export NAME='v'`: a shell habit; every variable of an env file is set for the container. */
  Export: "'export' not allowed: write NAME='value'",
  /** `NAME ='v'` */
  BlankBeforeEquals: "blank before '='",
  /** After `=`: unquoted, double-quoted, a blank then a quote, or nothing. */
  NotQuoted: 'value must be single-quoted',
  /** `NAME='a''b'` */
  AdjacentQuotes: 'adjacent quoted strings',
  /** `NAME='v'x`, `NAME='v'#c`, `NAME='v' x` */
  TextAfterQuote: 'text after closing quote',
  /** Reported at the line where the value started. */
  UnclosedQuote: 'unclosed quote',
  /** CRLF files: bash would keep the CR in the value or make it part of a command word. */
  CarriageReturn: 'carriage return outside quotes',
  /** UTF-8, UTF-16LE or UTF-16BE byte-order mark at the start of the file. */
  ByteOrderMark: 'byte-order mark',
  /** Anywhere in the file: bash silently drops NUL bytes. */
  NulByte: 'NUL byte',
  /** Reported with line 0: it concerns the whole file. */
  FileTooLarge: `file larger than ${MAX_FILE_BYTES} bytes`,
  NameTooLong: `name longer than ${MAX_NAME_CHARS} characters`,
  /** Reported at the line where the value started. */
  ValueTooLong: `value longer than ${MAX_VALUE_BYTES} bytes`,
  /** Reported at the line of the first offending byte. */
  InvalidUtf8: 'value is not valid UTF-8',
} as const;
export type Reason = (typeof Reason)[keyof typeof Reason];
