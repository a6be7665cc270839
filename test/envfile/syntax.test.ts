// The env-file format's byte classes agree with bash's reading of an assignment word, and the
// reason phrases carry no placeholder a file's bytes could fill.
import t from 'tap';
import {
  BLANKS,
  isBlank,
  isNameByte,
  isNameStart,
  MAX_FILE_BYTES,
  MAX_NAME_CHARS,
  MAX_VALUE_BYTES,
  NAME_PATTERN,
  Reason,
} from '../../src/envfile/syntax.ts';

t.test('every byte: name start and name byte as NAME_PATTERN reads them', async (t) => {
  const wrong: number[] = [];
  for (let b = 0; b < 256; b++) {
    const c = String.fromCharCode(b);
    if (isNameStart(b) !== NAME_PATTERN.test(c)) wrong.push(b);
    if (isNameByte(b) !== NAME_PATTERN.test(`A${c}`)) wrong.push(b);
  }
  t.same(wrong, []);
  t.notOk(NAME_PATTERN.test('export A'), 'an export prefix is not a name');
  t.notOk(NAME_PATTERN.test(''));
});

t.test("blanks are bash's: space and tab, not CR, FF or VT", async (t) => {
  const blanks = [...Array(256).keys()].filter(isBlank);
  t.same(blanks, [0x09, 0x20]);
  t.same(
    [...BLANKS].map((c) => c.charCodeAt(0)).sort((a, b) => a - b),
    blanks,
  );
});

t.test('reasons: fixed phrases, distinct, one line; the limits are the ones docs/design.md#env-files names', async (t) => {
  const reasons = Object.values(Reason);
  t.equal(new Set(reasons).size, reasons.length);
  for (const r of reasons) t.match(r, /^[^\n%$`{}]+$/, r);
  t.equal(Reason.FileTooLarge, `file larger than ${MAX_FILE_BYTES} bytes`);
  t.same([MAX_FILE_BYTES, MAX_NAME_CHARS, MAX_VALUE_BYTES], [65536, 128, 32768]);
});
