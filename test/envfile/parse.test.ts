import t, { type Test } from 'tap';
import util from 'node:util';
import fc from 'fast-check';
import {
  BLANKS,
  isBlank,
  MAX_FILE_BYTES,
  MAX_NAME_CHARS,
  MAX_VALUE_BYTES,
  NAME_PATTERN,
  parseEnvFile,
  Reason,
} from '../../src/envfile/envfile.ts';
import { EnvFileError, EnvhookError } from '../../src/errors.ts';
import * as api from '../../src/index.ts';
import { kubeletCases } from './kubelet-cases.ts';

type Input = string | Uint8Array;
const enc = new TextEncoder();
const toBytes = (input: Input): Uint8Array => (typeof input === 'string' ? enc.encode(input) : input);
const parse = (input: Input): Map<string, string> => parseEnvFile(toBytes(input));
/** Bytes from strings (UTF-8) and byte lists, for files that are not valid UTF-8. */
const raw = (...parts: (string | number[])[]): Uint8Array =>
  Buffer.concat(parts.map((p) => (typeof p === 'string' ? enc.encode(p) : Uint8Array.from(p))));
/** A test label, ASCII only: a raw NEL or U+2028 in a TAP line would break the TAP stream. */
const show = (input: Input): string =>
  JSON.stringify(typeof input === 'string' ? input : Buffer.from(input).toString('latin1')).replace(
    /[^\x20-\x7e]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );

function rejection(input: Input): EnvFileError {
  try {
    parse(input);
  } catch (err) {
    if (err instanceof EnvFileError) return err;
    throw err;
  }
  throw new Error(`accepted: ${show(input)}`);
}

function rejects(t: Test, input: Input, line: number, reason: Reason): void {
  const err = rejection(input);
  t.same(
    { line: err.line, reason: err.reason, message: err.message },
    { line, reason, message: line > 0 ? `line ${line}: ${reason}` : reason },
    show(input),
  );
}

t.test('the public API exports the parser and its error', async (t) => {
  t.equal(api.parseEnvFile, parseEnvFile);
  t.equal(api.EnvFileError, EnvFileError);
  const err = rejection('A=x');
  t.type(err, EnvhookError);
  t.equal(err.name, 'EnvFileError');
});

// The kubelet parser looks up one key and stops at its first match; restated for a whole-file
// parser, each rejected case is rejected at the first bad line. The classes are the JSON's;
// the lines and reasons are ours, exact.
const KUBELET_CLASSES: Record<string, Reason[]> = {
  'whitespace-before-equals': [Reason.BlankBeforeEquals],
  'empty-name': [Reason.EmptyName],
  'missing-equals': [Reason.MissingEquals],
  'unquoted-value': [Reason.NotQuoted],
  'content-after-quote': [Reason.TextAfterQuote, Reason.AdjacentQuotes],
};
const KUBELET_REJECTIONS: Record<string, [number, Reason]> = {
  'whitespace around = and not allowed': [1, Reason.BlankBeforeEquals],
  'key with whitespace (should error)': [1, Reason.BlankBeforeEquals],
  'key is empty (should error)': [1, Reason.EmptyName],
  'missing key triggers error with line number': [1, Reason.EmptyName],
  'invalid line triggers error with line number': [2, Reason.MissingEquals],
  'unquoted value triggers error': [2, Reason.NotQuoted],
  'double quoted value triggers error': [2, Reason.NotQuoted],
  'value with multiple adjacent quoted strings': [1, Reason.AdjacentQuotes],
  // KEY2='bar\nKEY3=' is one quoted value; `baz` follows its closing quote on line 3.
  'unclosed single quote triggers error': [3, Reason.TextAfterQuote],
  'content after closing quote triggers error': [2, Reason.TextAfterQuote],
  // 'value with \' closes after the backslash; `nested` follows.
  'single quotes within value quotes': [1, Reason.TextAfterQuote],
};

t.test('the kubelet parser cases: all 48, each agreed with', async (t) => {
  const cases = kubeletCases();
  t.equal(cases.length, 48, 'the shared file holds the 48 kubelet cases');
  t.same(
    Object.keys(KUBELET_REJECTIONS).sort(),
    cases
      .filter((c) => c.rejected)
      .map((c) => c.name)
      .sort(),
    'every rejected case has its exact line and reason here',
  );
  for (const c of cases) {
    if (c.rejected) {
      const classReasons = KUBELET_CLASSES[c.reason ?? ''];
      const [line, reason] = KUBELET_REJECTIONS[c.name]!;
      t.ok(classReasons?.includes(reason), `${c.name}: class ${c.reason} maps to ${reason}`);
      rejects(t, c.input, line, reason);
    } else {
      const vars = parse(c.input);
      if (c.value === null) t.notOk(vars.has(c.key), `${c.name}: ${c.key} not defined`);
      else t.equal(vars.get(c.key), c.value, c.name);
    }
  }
});

t.test('examples of KEP-3721 and the kubernetes.io task page', async (t) => {
  // The task page's init container writes these two lines.
  t.same(
    [...parse("DB_ADDRESS='address'\nREST_ENDPOINT='endpoint'\n")],
    [
      ['DB_ADDRESS', 'address'],
      ['REST_ENDPOINT', 'endpoint'],
    ],
  );
  // The KEP's user story 1, in the single-quoted format the KEP settled on.
  t.same([...parse("CONFIG_VAR='HELLO'\n")], [['CONFIG_VAR', 'HELLO']]);
  // The KEP's first drafts wrote values unquoted; the final format refuses them.
  rejects(t, 'CONFIG_VAR=HELLO\n', 1, Reason.NotQuoted);
  rejects(t, 'KEY1=VALUE1\nKEY2=VALUE2\n', 1, Reason.NotQuoted);
});

t.test('accepted files', async (t) => {
  const cases: [Input, [string, string][]][] = [
    ['', []],
    ['\n\n\n', []],
    [' \t \n\t\n', []],
    ['# only a comment', []],
    ["A=''", [['A', '']]],
    ["A='x'", [['A', 'x']]],
    ["A='x' \t", [['A', 'x']]],
    ["A='x'\t# c", [['A', 'x']]],
    ["A='x' #", [['A', 'x']]],
    ["A='x' # it's a 'comment' with quotes = and \\", [['A', 'x']]],
    [" \t A='x'", [['A', 'x']]],
    ["  # indented comment\n\t#\nA='x'", [['A', 'x']]],
    ["A='#'", [['A', '#']]],
    ["A='a # b'", [['A', 'a # b']]],
    ["A='\\'", [['A', '\\']]],
    ["A='\"'", [['A', '"']]],
    ["A='$(x) `y` ${z} $HOME \\n'", [['A', '$(x) `y` ${z} $HOME \\n']]],
    ["A='\t x \t'", [['A', '\t x \t']]],
    ["A='x\r'", [['A', 'x\r']]],
    ["A='x\r\ny'", [['A', 'x\r\ny']]],
    ["A='\n'", [['A', '\n']]],
    ["A='\n# not a comment\nB=y\n'", [['A', '\n# not a comment\nB=y\n']]],
    ["A='中文 Français 🌍'", [['A', '中文 Français 🌍']]],
    ["A='\uFEFFx'", [['A', '\uFEFFx']]],
    ["A='\x01\x7f\x1b'", [['A', '\x01\x7f\x1b']]],
    [
      "_a='1'\na='2'\n_='3'\nZ9_='4'\n__='5'",
      [
        ['_a', '1'],
        ['a', '2'],
        ['_', '3'],
        ['Z9_', '4'],
        ['__', '5'],
      ],
    ],
    [
      "if='1'\nfor='2'\nexport='3'\nPATH='4'",
      [
        ['if', '1'],
        ['for', '2'],
        ['export', '3'],
        ['PATH', '4'],
      ],
    ],
    [raw('# \xff\xfe latin-1 and stray bytes: ', [0xe9, 0xff, 0x80], "\nA='x' # ", [0xc0, 0xaf], '\n'), [['A', 'x']]],
  ];
  for (const [input, entries] of cases) t.same([...parse(input)], entries, show(input));
});

t.test('duplicates: the last value wins, the position is that of the first definition', async (t) => {
  t.same(
    [...parse("A='1'\nB='2'\nA='3'\n")],
    [
      ['A', '3'],
      ['B', '2'],
    ],
  );
  t.same([...parse("A='1'\nA=''\n")], [['A', '']], "A='' overrides");
  t.same([...parse("A=''\nA='x'\n")], [['A', 'x']]);
});

t.test('multi-line values keep their newlines and line numbers stay exact', async (t) => {
  t.same(
    [...parse("A='1\n2\n\n3'\nB='x'\n")],
    [
      ['A', '1\n2\n\n3'],
      ['B', 'x'],
    ],
  );
  t.same([...parse("A='\n  indented\n\ttabbed\n'")], [['A', '\n  indented\n\ttabbed\n']]);
  rejects(t, "A='1\n2\n3'\nB=x\n", 4, Reason.NotQuoted);
  rejects(t, "A='1\n2'x\n", 2, Reason.TextAfterQuote);
  rejects(t, "A='1\n2' #c\n\nB\n", 4, Reason.MissingEquals);
  rejects(t, "A='1\n2\n3\n", 1, Reason.UnclosedQuote);
  rejects(t, "\n\nA='ok'\nB='1\n2\n", 4, Reason.UnclosedQuote);
});

t.test('every rejection class, with its exact line and message', async (t) => {
  const cases: [Input, number, Reason][] = [
    ['INVALID_LINE\n', 1, Reason.MissingEquals],
    ["A='x'\nINVALID_LINE\nB='y'\n", 2, Reason.MissingEquals],
    ["A='x'\nB", 2, Reason.MissingEquals],
    ['A B\n', 1, Reason.MissingEquals],
    ["A'x'\n", 1, Reason.MissingEquals],
    ['echo hello\n', 1, Reason.MissingEquals],
    ["='x'\n", 1, Reason.EmptyName],
    [" \t='x'\n", 1, Reason.EmptyName],
    ["A='1'\n\n=''\n", 3, Reason.EmptyName],
    ["1A='x'", 1, Reason.InvalidName],
    ["export A='x'", 1, Reason.Export],
    ["export\tA='x'", 1, Reason.Export],
    ["  export  A='x' # c", 1, Reason.Export],
    ['export A=x', 1, Reason.Export],
    ["exportA B='x'", 1, Reason.InvalidName],
    ["export A B='x'", 1, Reason.Export],
    ["export 1A='x'", 1, Reason.Export],
    ["readonly A='x'", 1, Reason.InvalidName],
    ["A B='x'", 1, Reason.InvalidName],
    ["A-B='x'", 1, Reason.InvalidName],
    ["A.B='x'", 1, Reason.InvalidName],
    ["A#='x'", 1, Reason.InvalidName],
    ["$A='x'", 1, Reason.InvalidName],
    ['"A"=\'x\'', 1, Reason.InvalidName],
    ["'A'='x'", 1, Reason.InvalidName],
    ["é='x'", 1, Reason.InvalidName],
    ["\fA='x'", 1, Reason.InvalidName],
    ["\vA='x'", 1, Reason.InvalidName],
    ["A\f='x'", 1, Reason.InvalidName],
    ["1A ='x'", 1, Reason.InvalidName],
    ["A ='x'", 1, Reason.BlankBeforeEquals],
    ["A\t='x'", 1, Reason.BlankBeforeEquals],
    ["A = 'x'", 1, Reason.BlankBeforeEquals],
    ["  A \t ='x'", 1, Reason.BlankBeforeEquals],
    ['A=x', 1, Reason.NotQuoted],
    ['A="x"', 1, Reason.NotQuoted],
    ["A= 'x'", 1, Reason.NotQuoted],
    ["A=\t'x'", 1, Reason.NotQuoted],
    ['A=', 1, Reason.NotQuoted],
    ["A=\nB='x'", 1, Reason.NotQuoted],
    ["A=$'x'", 1, Reason.NotQuoted],
    ['A=`x`', 1, Reason.NotQuoted],
    ["A=\\'x'", 1, Reason.NotQuoted],
    ["A='x''y'", 1, Reason.AdjacentQuotes],
    ["A='''y'", 1, Reason.AdjacentQuotes],
    ["A=''''", 1, Reason.AdjacentQuotes],
    // B's value runs from line 2 to the quote after C=; the next quote is adjacent.
    ["A='x'\nB='y\nC=''\n", 3, Reason.AdjacentQuotes],
    ["A='x'y", 1, Reason.TextAfterQuote],
    ["A='x'#c", 1, Reason.TextAfterQuote],
    ["A='x' y", 1, Reason.TextAfterQuote],
    ["A='x' B='y'", 1, Reason.TextAfterQuote],
    ["A='x';", 1, Reason.TextAfterQuote],
    ["A='x' 'y'", 1, Reason.TextAfterQuote],
    ['A=\'x\'"y"', 1, Reason.TextAfterQuote],
    ["A='x' \\\nB='y'", 1, Reason.TextAfterQuote],
    ["A='x'\f", 1, Reason.TextAfterQuote],
    ["A='x", 1, Reason.UnclosedQuote],
    ["A='x'\nB='", 2, Reason.UnclosedQuote],
    ["A='x'\r\n", 1, Reason.CarriageReturn],
    ["A='x' \r\n", 1, Reason.CarriageReturn],
    ["A='x' # c\r\n", 1, Reason.CarriageReturn],
    ["# c\r\nA='x'\n", 1, Reason.CarriageReturn],
    ['\r\n', 1, Reason.CarriageReturn],
    [' \t\r\n', 1, Reason.CarriageReturn],
    ["A='x'\n\r\n", 2, Reason.CarriageReturn],
    ['A=\r\n', 1, Reason.CarriageReturn],
    ['A\r\n', 1, Reason.CarriageReturn],
    ["A='x\r\ny'\r\n", 2, Reason.CarriageReturn],
    ["\uFEFFA='x'\n", 1, Reason.ByteOrderMark],
    ['\uFEFF', 1, Reason.ByteOrderMark],
    [raw([0xff, 0xfe], "A='x'"), 1, Reason.ByteOrderMark],
    [raw([0xfe, 0xff], "A='x'"), 1, Reason.ByteOrderMark],
    ["A='x\0y'", 1, Reason.NulByte],
    ["A='x'\n# \0\n", 2, Reason.NulByte],
    ["A='x\n\0'", 2, Reason.NulByte],
    ['\0', 1, Reason.NulByte],
    // A NUL is found before any other error: it makes the file binary.
    ["A=x\nB='\0'", 2, Reason.NulByte],
    [raw("A='", [0xff], "'"), 1, Reason.InvalidUtf8],
    [raw("A='ok'\nB='a\nb", [0xc3, 0x28], "'"), 3, Reason.InvalidUtf8],
    [raw("A='\n\n", [0xe2, 0x82], "'"), 3, Reason.InvalidUtf8],
    [raw("A='", [0xc0, 0xaf], "'"), 1, Reason.InvalidUtf8],
    [raw("A='", [0xed, 0xa0, 0x80], "'"), 1, Reason.InvalidUtf8],
    [raw("A='", [0xf4, 0x90, 0x80, 0x80], "'"), 1, Reason.InvalidUtf8],
  ];
  for (const [input, line, reason] of cases) rejects(t, input, line, reason);
  t.same(new Set(cases.map((c) => c[2])).size, Object.values(Reason).length - 3, 'every class but the three limits (tested below) appears');
});

t.test('limits: at the bound accepted, one over rejected', async (t) => {
  t.equal(MAX_FILE_BYTES, 65536);
  t.equal(MAX_NAME_CHARS, 128);
  t.equal(MAX_VALUE_BYTES, 32768);
  t.same([...parse('#'.repeat(65536))], [], 'a 65536-byte file');
  rejects(t, '#'.repeat(65537), 0, Reason.FileTooLarge);
  rejects(t, "A='x'\n".repeat(11000), 0, Reason.FileTooLarge);
  const two = `A='${'a'.repeat(32768)}'\nB='`;
  const full = two + 'b'.repeat(65536 - two.length - 1) + "'";
  t.equal(full.length, 65536);
  t.same(
    [...parse(full)].map(([k, v]) => [k, v.length]),
    [
      ['A', 32768],
      ['B', 65536 - two.length - 1],
    ],
    'a full file of two values',
  );
  rejects(t, full + '\n', 0, Reason.FileTooLarge);

  const name = 'N'.repeat(128);
  t.same([...parse(`${name}='x'`)], [[name, 'x']]);
  t.same([...parse(`_${'9'.repeat(127)}='x'`).keys()], [`_${'9'.repeat(127)}`]);
  rejects(t, `${name}N='x'`, 1, Reason.NameTooLong);
  rejects(t, `A='x'\n${name}N=''`, 2, Reason.NameTooLong);
  rejects(t, `1${name}='x'`, 1, Reason.InvalidName);

  t.equal(parse(`A='${'v'.repeat(32768)}'`).get('A')!.length, 32768);
  rejects(t, `A='${'v'.repeat(32769)}'`, 1, Reason.ValueTooLong);
  const euros = '€'.repeat(10922); // 3 bytes each: 32766 bytes
  t.equal(parse(`A='${euros}ab'`).get('A'), `${euros}ab`, '32768 bytes of UTF-8');
  rejects(t, `A='${euros}abc'`, 1, Reason.ValueTooLong);
  t.equal(parse(`A='${euros}é'`).get('A'), `${euros}é`, 'a 2-byte character ending at the bound');
  rejects(t, `A='${euros}€'`, 1, Reason.ValueTooLong);
  rejects(t, `\n\nA='${'x\n'.repeat(16385)}'`, 3, Reason.ValueTooLong);
});

t.test('blanks are space and tab, exactly as bash splits words', async (t) => {
  t.equal(BLANKS, ' \t');
  for (let b = 0; b < 256; b++) t.equal(isBlank(b), b === 0x20 || b === 0x09, `byte ${b}`);
  for (const ws of ['\v', '\f']) {
    rejects(t, `${ws}A='x'`, 1, Reason.InvalidName);
    rejects(t, `A='x'${ws}`, 1, Reason.TextAfterQuote);
    rejects(t, `A='x'${ws}# c`, 1, Reason.TextAfterQuote);
  }
  t.ok(NAME_PATTERN.test('_9') && !NAME_PATTERN.test('9_') && !NAME_PATTERN.test(''));
});

t.test('reasons: a fixed, distinct, short set', async (t) => {
  const reasons = Object.values(Reason);
  t.equal(new Set(reasons).size, reasons.length);
  for (const r of reasons) t.ok(r.length > 0 && r.length <= 40 && !/[\r\n]/.test(r), r);
});

// A canary inside every kind of malformed file never reaches the error, its message, its
// inspection or its JSON form.
t.test('canary: no byte of a rejected file in the error', async (t) => {
  const c = 'CANARY_5e1f';
  const cases: [Input, Reason][] = [
    [`${c}\n`, Reason.MissingEquals],
    [`='${c}'`, Reason.EmptyName],
    [`export ${c}='${c}'`, Reason.Export],
    [`${c}-x='${c}'`, Reason.InvalidName],
    [`${c} ='${c}'`, Reason.BlankBeforeEquals],
    [`A=${c}`, Reason.NotQuoted],
    [`A="${c}"`, Reason.NotQuoted],
    [`A='${c}''${c}'`, Reason.AdjacentQuotes],
    [`A='${c}'${c}`, Reason.TextAfterQuote],
    [`A='${c}'#${c}`, Reason.TextAfterQuote],
    [`A='${c}\n${c}`, Reason.UnclosedQuote],
    [`A='${c}'\r\n`, Reason.CarriageReturn],
    [`\uFEFF${c}='${c}'`, Reason.ByteOrderMark],
    [`A='${c}\0${c}'`, Reason.NulByte],
    [`A='${c.repeat(6000)}'`, Reason.FileTooLarge],
    [`${c}${'X'.repeat(128)}='${c}'`, Reason.NameTooLong],
    [`A='${c.repeat(3000)}'`, Reason.ValueTooLong],
    [raw(`A='${c}`, [0xff], `${c}'`), Reason.InvalidUtf8],
  ];
  t.same(new Set(cases.map((x) => x[1])).size, Object.values(Reason).length, 'every reason');
  for (const [input, reason] of cases) {
    const err = rejection(input);
    t.equal(err.reason, reason, show(input).slice(0, 60));
    for (const text of [err.message, err.reason, util.inspect(err), JSON.stringify(err), String(err.stack)]) {
      t.notOk(text.includes('CANARY') || text.includes('5e1f'), `${reason}: no canary`);
    }
  }
});

t.test('robustness: arbitrary bytes give a Map or an EnvFileError with a known reason', async (t) => {
  const reasons = new Set<string>(Object.values(Reason));
  const envish = fc.constantFrom(
    ...[...'AZaz_09=\'"# \t\n\r=\\$;x'].map((ch) => ch.charCodeAt(0)),
    0,
    0x80,
    0xc3,
    0xa9,
    0xef,
    0xbb,
    0xbf,
    0xff,
  );
  fc.assert(
    fc.property(
      fc.oneof(
        fc.uint8Array({ maxLength: 200 }),
        fc.array(envish, { maxLength: 200 }).map((a) => Uint8Array.from(a)),
      ),
      (bytes) => {
        try {
          parseEnvFile(bytes);
          return true;
        } catch (err) {
          if (!(err instanceof EnvFileError) || !reasons.has(err.reason)) return false;
          const lines = bytes.filter((b) => b === 0x0a).length + 1;
          return err.line >= 1 && err.line <= lines && err.message === `line ${err.line}: ${err.reason}`;
        }
      },
    ),
    { seed: 3721, numRuns: 3000 },
  );
  t.pass('3000 inputs');
});

// Speed is measured in bench/ (env file size rows), not asserted here: these are the worst
// shapes at the largest size, checked for their results.
t.test('the worst files of the largest size parse to the right result', async (t) => {
  t.equal(parseEnvFile(toBytes("A=''\n".repeat(13107))).get('A'), '');
  t.equal(parseEnvFile(toBytes('#\n'.repeat(32768))).size, 0);
  t.equal(parseEnvFile(toBytes('\n'.repeat(65536))).size, 0);
  t.throws(() => parseEnvFile(toBytes('x'.repeat(65536))), new EnvFileError(1, "missing '='"));
  const two = parseEnvFile(toBytes(`A='${'a\n'.repeat(16384)}'\nB='${'b\n'.repeat(16370)}'`));
  t.equal(two.get('A')!.length, 32768);
  t.equal(two.get('B')!.length, 32740);
});

t.test("every difference from the kubelet's parser docs/pods.md lists, envhook's side of each", async (t) => {
  const parse = (text: string) => {
    try {
      return Object.fromEntries(parseEnvFile(Buffer.from(text, 'latin1')));
    } catch (err) {
      return (err as EnvFileError).message;
    }
  };
  t.same(parse("A='1'\nA='2'\n"), { A: '2' }, 'the last duplicate wins');
  t.same(parse("A=''\n"), { A: '' }, "NAME='' is an empty variable");
  t.equal(parse("A='1'\r\n"), 'line 1: carriage return outside quotes', 'CRLF line ends');
  t.equal(parse("A='1'#c\n"), 'line 1: text after closing quote', 'a comment without a blank');
  t.equal(parse("A= '1'\n"), 'line 1: value must be single-quoted', 'a blank after =');
  t.equal(parse("my.key='1'\n"), 'line 1: invalid variable name', 'a name bash rejects');
  t.same(parse("A='x\r\ny'\n"), { A: 'x\r\ny' }, 'CRLF inside a quoted value: the CR kept');
  t.equal(parse("A='x\0y'\n"), 'line 1: NUL byte', 'a NUL byte');
  t.equal(parse("\xef\xbb\xbfA='1'\n"), 'line 1: byte-order mark', 'a byte-order mark');
  t.equal(parse("A='\xff'\n"), 'line 1: value is not valid UTF-8', 'invalid UTF-8');
  t.equal(parse(`A='${'x'.repeat(32769)}'\n`), 'line 1: value longer than 32768 bytes');
  t.equal(parse(`#${'x'.repeat(65536)}\n`), 'file larger than 65536 bytes');
  t.equal(parse(`${'A'.repeat(129)}='1'\n`), 'line 1: name longer than 128 characters');
});
