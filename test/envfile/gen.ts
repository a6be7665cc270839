// fast-check arbitraries for the differential test: valid env files with the map they must
// give (a model), and near-miss files with the one defect the parser must report.
import fc from 'fast-check';
import { MAX_FILE_BYTES, Reason } from '../../src/envfile/envfile.ts';

const enc = new TextEncoder();
const bytesOf = (...parts: (string | Uint8Array | readonly number[])[]): Uint8Array =>
  Buffer.concat(parts.map((p) => (typeof p === 'string' ? enc.encode(p) : Uint8Array.from(p))));

// Names bash gives a meaning of its own: assigning them changes the shell (PATH, IFS, LC_*,
// POSIXLY_CORRECT), fails (UID, EUID, PPID, SHELLOPTS, BASHOPTS are read-only) or is replaced
// by a live value (RANDOM, SECONDS, LINENO, `_`), and PWD and SHLVL are what bash itself
// exports. The parser accepts them like any name; bash's env cannot show what the file said,
// so the generator does not use them.
const BASH_SPECIAL = new Set(
  (
    '_ PWD OLDPWD SHLVL PATH IFS HOME ENV LANG LANGUAGE POSIXLY_CORRECT UID EUID PPID SHELLOPTS ' +
    'RANDOM SRANDOM SECONDS LINENO EPOCHSECONDS EPOCHREALTIME GROUPS FUNCNAME DIRSTACK HOSTNAME ' +
    'HOSTTYPE MACHTYPE OSTYPE OPTIND OPTARG OPTERR CDPATH GLOBIGNORE GLOBSORT TIMEFORMAT TMOUT ' +
    'MAIL MAILCHECK MAILPATH PIPESTATUS REPLY SHELL TERM COLUMNS LINES PROMPT_COMMAND ' +
    'PROMPT_DIRTRIM FCEDIT FIGNORE FUNCNEST IGNOREEOF INPUTRC INSIDE_EMACS EMACS EXECIGNORE ' +
    'HOSTFILE CHILD_MAX COPROC MAPFILE TMPDIR auto_resume histchars'
  ).split(' '),
);
const isBashSpecial = (name: string): boolean => BASH_SPECIAL.has(name) || /^(BASH|COMP_|LC_|READLINE_|HIST|PS[0-4]$)/.test(name);

const chars = (s: string) => fc.constantFrom(...s);
const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_';
const randomName = fc.tuple(chars(ALNUM.replace(/[0-9]/g, '')), fc.string({ unit: chars(ALNUM), maxLength: 15 })).map(([a, b]) => a + b);
// Valid but odd: shell keywords and builtins (an assignment word is never one), one letter,
// underscores, mixed case, the longest name allowed.
const ODD_NAMES = [
  'a',
  'Z',
  '__',
  '_1',
  '_a_',
  'x9',
  'if',
  'then',
  'else',
  'elif',
  'fi',
  'for',
  'in',
  'do',
  'done',
  'case',
  'esac',
  'while',
  'until',
  'function',
  'select',
  'time',
  'coproc',
  'export',
  'readonly',
  'local',
  'declare',
  'alias',
  'set',
  'true',
  'echo',
  'lower_case',
  'MiXeD_CaSe',
  'A'.repeat(128),
  `_${'9'.repeat(127)}`,
];
const name = fc
  .oneof(
    {
      weight: 5,
      arbitrary: randomName,
    },
    { weight: 2, arbitrary: fc.constantFrom(...ODD_NAMES) },
    { weight: 3, arbitrary: fc.constantFrom('DUP', 'dup', 'Dup_1') },
  )
  .filter((n) => !isBashSpecial(n) && !n.startsWith('DEFECT'));

const blanks = (minLength = 0) => fc.string({ unit: chars(' \t'), minLength, maxLength: 3 });
const printableNoQuote = fc
  .integer({ min: 0x20, max: 0x7e })
  .filter((c) => c !== 0x27)
  .map((c) => String.fromCharCode(c));
const shellish = chars('\t\r#"\\$`=!*?~{}();&|<> ');
const controls = fc
  .integer({
    min: 1,
    max: 0x1f,
  })
  .filter((c) => c !== 0x0a)
  .map((c) => String.fromCharCode(c))
  .chain((c) => fc.constantFrom(c, '\x7f'));
const unicode = fc.oneof(
  fc.constantFrom('é', 'ß', '中', '🌍', '\u0085', '\u00a0', '\u2028', '\uFEFF', '\uFFFD'),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }).filter((s) => s !== "'" && s !== '\0'),
);
const lineChar = fc.oneof(
  { weight: 12, arbitrary: printableNoQuote },
  { weight: 3, arbitrary: shellish },
  { weight: 1, arbitrary: controls },
  { weight: 2, arbitrary: unicode },
);
const valueChar = fc.oneof({ weight: 12, arbitrary: lineChar }, { weight: 2, arbitrary: fc.constant('\n') });
/** A value: all printable ASCII but the quote, shell syntax, controls, UTF-8 and newlines. */
const value = (multiLine: boolean) => {
  const unit = multiLine ? valueChar : lineChar;
  return fc.oneof(
    {
      weight: 9,
      arbitrary: fc.string({ unit, maxLength: 40 }),
    },
    { weight: 1, arbitrary: fc.string({ unit, minLength: 200, maxLength: 1500 }) },
  );
};
/** Comment text is skipped as bytes: anything but LF, CR and NUL, invalid UTF-8 included. */
const commentText = fc.array(
  fc.oneof(
    fc.integer({ min: 0x20, max: 0x7e }),
    fc.constant(0x09),
    fc.integer({ min: 1, max: 0x1f }).filter((b) => b !== 0x0a && b !== 0x0d),
    fc.integer({ min: 0x80, max: 0xff }),
  ),
  { maxLength: 30 },
);

export interface Item {
  bytes: Uint8Array;
  assign?: [string, string];
}
const blankLine = blanks().map((b): Item => ({ bytes: bytesOf(b) }));
const commentLine = fc.tuple(blanks(), commentText).map(([b, c]): Item => ({ bytes: bytesOf(b, '#', c) }));
const trailer = fc.oneof(
  fc.constant(bytesOf('')),
  blanks(1).map((b) => bytesOf(b)),
  fc.tuple(blanks(1), commentText).map(([b, c]) => bytesOf(b, '#', c)),
);
const assignment = (multiLine: boolean) =>
  fc
    .tuple(blanks(), name, value(multiLine), trailer)
    .map(([b, n, v, tr]): Item => ({ bytes: bytesOf(b, n, "='", v, "'", tr), assign: [n, v] }));

export interface ValidFile {
  items: Item[];
  finalNewline: boolean;
}
export const validFile = (multiLine = true) =>
  fc.record({
    items: fc.array(
      fc.oneof({ weight: 6, arbitrary: assignment(multiLine) }, { weight: 1, arbitrary: blankLine }, { weight: 2, arbitrary: commentLine }),
      { maxLength: 25 },
    ),
    finalNewline: fc.boolean(),
  });

export function render(file: ValidFile): Uint8Array {
  const parts: Uint8Array[] = [];
  file.items.forEach((item, i) => parts.push(...(i > 0 ? [bytesOf('\n')] : []), item.bytes));
  if (file.finalNewline && file.items.length > 0) parts.push(bytesOf('\n'));
  return Buffer.concat(parts);
}

/** The model: what the file defines, last definition winning, in order of first definition. */
export function model(items: Item[]): Map<string, string> {
  const vars = new Map<string, string>();
  for (const item of items) if (item.assign) vars.set(item.assign[0], item.assign[1]);
  return vars;
}

/**
 * One defect line. `naive` is what a lenient reader (the kubelet's, or a dotenv library) would
 * take from it. `diverges`: bash does not read it that way (it fails, complains, or sets other
 * variables or values), so accepting the line would break the KEP's rule; otherwise the
 * rejection is envhook's policy (limits, quoting rules, encodings) and bash agrees with the
 * naive reading.
 */
interface Defect {
  kind: string;
  line: Uint8Array;
  reason: Reason;
  naive: [string, Uint8Array] | null;
  diverges: boolean;
  atEnd?: boolean;
}
const N = 'DEFECT_X';
const safe = fc.string({ unit: chars('abcXYZ019_./:-'), minLength: 1, maxLength: 12 });
const v = fc.string({ unit: lineChar, maxLength: 20 });
const d = (
  kind: string,
  line: Uint8Array,
  reason: Reason,
  naive: [string, string | Uint8Array] | null,
  diverges: boolean,
  atEnd = false,
): Defect => ({
  kind,
  line,
  reason,
  naive: naive && [naive[0], typeof naive[1] === 'string' ? bytesOf(naive[1]) : naive[1]],
  diverges,
  atEnd,
});
const defect: fc.Arbitrary<Defect> = fc.oneof(
  fc.tuple(blanks(1), v).map(([b, x]) => d('blank before =', bytesOf(N, b, "='", x, "'"), Reason.BlankBeforeEquals, [N, x], true)),
  fc.tuple(blanks(1), v).map(([b, x]) => d('blank after =', bytesOf(N, '=', b, "'", x, "'"), Reason.NotQuoted, [N, x], true)),
  safe.map((x) => d('unquoted', bytesOf(N, '=', x), Reason.NotQuoted, [N, x], false)),
  safe.map((x) => d('double-quoted', bytesOf(N, '="', x, '"'), Reason.NotQuoted, [N, x], false)),
  fc.constant(d('nothing after =', bytesOf(N, '='), Reason.NotQuoted, [N, ''], false)),
  v.map((x) => d('export', bytesOf('export ', N, "='", x, "'"), Reason.Export, [N, x], false)),
  v.map((x) => d('digit first', bytesOf('9', N, "='", x, "'"), Reason.InvalidName, null, true)),
  fc
    .tuple(chars('-.@+:%\f\v'), v)
    .map(([c, x]) => d(`${JSON.stringify(c)} in name`, bytesOf(N, c, "x='", x, "'"), Reason.InvalidName, null, true)),
  v.map((x) => d('empty name', bytesOf("='", x, "'"), Reason.EmptyName, null, true)),
  fc.constant(d('missing =', bytesOf(N), Reason.MissingEquals, null, true)),
  fc.tuple(v, safe).map(([x, c]) => d("'v'#c", bytesOf(N, "='", x, "'#", c), Reason.TextAfterQuote, [N, x], true)),
  fc.tuple(v, safe).map(([x, c]) => d("'v'x", bytesOf(N, "='", x, "'", c), Reason.TextAfterQuote, [N, x], true)),
  fc.tuple(v, v).map(([x, y]) => d('two assignments', bytesOf(N, "='", x, "' ", N, "_2='", y, "'"), Reason.TextAfterQuote, [N, x], true)),
  v.map((x) => d('command after', bytesOf(N, "='", x, "' envhook_no_such_command"), Reason.TextAfterQuote, [N, x], true)),
  v.map((x) => d("'v';", bytesOf(N, "='", x, "';"), Reason.TextAfterQuote, [N, x], false)),
  fc
    .tuple(
      v,
      v.filter((y) => y.length > 0),
    )
    .map(([x, y]) => d('adjacent quotes', bytesOf(N, "='", x, "''", y, "'"), Reason.AdjacentQuotes, [N, x], true)),
  v.map((x) => d('unclosed quote', bytesOf(N, "='", x), Reason.UnclosedQuote, [N, x], true, true)),
  v.map((x) => d('CR', bytesOf(N, "='", x, "'\r"), Reason.CarriageReturn, [N, x], true)),
  fc.tuple(v, v).map(([x, y]) => d('NUL in value', bytesOf(N, "='", x, [0], y, "'"), Reason.NulByte, [N, bytesOf(x, [0], y)], true)),
  fc.tuple(safe, safe).map(([x, y]) => d('NUL in comment', bytesOf('# ', x, [0], y), Reason.NulByte, null, false)),
  v.map((x) => d('name too long', bytesOf(N.padEnd(129, 'X'), "='", x, "'"), Reason.NameTooLong, [N.padEnd(129, 'X'), x], false)),
  fc.constant(d('value too long', bytesOf(N, "='", 'v'.repeat(32769), "'"), Reason.ValueTooLong, [N, 'v'.repeat(32769)], false)),
  fc
    .tuple(safe, fc.constantFrom([0xff], [0x80], [0xc3, 0x28], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xf8, 0x88, 0x80, 0x80, 0x80]))
    .map(([x, bad]) => d('invalid UTF-8', bytesOf(N, "='", x, bad, x, "'"), Reason.InvalidUtf8, [N, bytesOf(x, bad, x)], false)),
);

interface RejectedFile {
  kind: string;
  bytes: Uint8Array;
  line: number;
  reason: Reason;
  /** The naive reading as NAME → bytes; null entries never occur. */
  naive: Map<string, Uint8Array>;
  diverges: boolean;
}

const naiveOf = (items: Item[], extra: [string, Uint8Array] | null): Map<string, Uint8Array> => {
  const m = new Map([...model(items)].map(([k, val]) => [k, bytesOf(val)] as [string, Uint8Array]));
  if (extra) m.set(extra[0], extra[1]);
  return m;
};

/** A valid file with one defect line inserted between two of its lines. */
const lineDefect = fc.tuple(validFile(), defect, fc.nat()).map(([file, def, at]): RejectedFile => {
  const p = def.atEnd ? file.items.length : at % (file.items.length + 1);
  const before = render({ items: file.items.slice(0, p), finalNewline: true });
  const after =
    file.items.length > p
      ? bytesOf('\n', render({ items: file.items.slice(p), finalNewline: file.finalNewline }))
      : bytesOf(def.atEnd ? '' : '\n');
  const bytes = bytesOf(before, def.line, after);
  const tooLarge = bytes.length > MAX_FILE_BYTES;
  return {
    kind: def.kind,
    bytes,
    line: tooLarge ? 0 : 1 + before.filter((b) => b === 0x0a).length,
    reason: tooLarge ? Reason.FileTooLarge : def.reason,
    naive: naiveOf(file.items, def.naive),
    diverges: def.diverges,
  };
});

/** Defects of the whole file: a byte-order mark, CRLF line ends, a size over the limit. */
const fileDefect = fc.oneof(
  validFile().map((file): RejectedFile => ({
    kind: 'byte-order mark',
    bytes: bytesOf([0xef, 0xbb, 0xbf], render(file)),
    line: 1,
    reason: Reason.ByteOrderMark,
    naive: naiveOf(file.items, null),
    diverges: true,
  })),
  fc.tuple(validFile(false), v).map(([file, x]): RejectedFile => {
    const items = [...file.items, { bytes: bytesOf(N, "='", x, "'"), assign: [N, x] as [string, string] }];
    const lf = render({ items, finalNewline: true });
    const crlf = Buffer.from(Buffer.from(lf).toString('latin1').replaceAll('\n', '\r\n'), 'latin1');
    return { kind: 'CRLF file', bytes: crlf, line: 1, reason: Reason.CarriageReturn, naive: naiveOf(items, null), diverges: true };
  }),
  validFile().map((file): RejectedFile => {
    const text = render({ ...file, finalNewline: true });
    const pad = bytesOf('#', 'p'.repeat(Math.max(0, MAX_FILE_BYTES - text.length)));
    return {
      kind: 'over 64 KiB',
      bytes: bytesOf(text, pad),
      line: 0,
      reason: Reason.FileTooLarge,
      naive: naiveOf(file.items, null),
      diverges: false,
    };
  }),
);

export const rejectedFile = fc.oneof({ weight: 6, arbitrary: lineDefect }, { weight: 1, arbitrary: fileDefect });
