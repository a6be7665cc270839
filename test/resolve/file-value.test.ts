// A whole file as one value: trailing line feeds dropped as `$(cat FILE)` drops them, the rest
// byte for byte; NUL and invalid UTF-8 refused with a fixed reason.
import t from 'tap';
import { fileValue, FileValueError } from '../../src/resolve/file-value.ts';

const v = (s: string | Uint8Array) => fileValue(typeof s === 'string' ? Buffer.from(s) : s);

t.test('trailing line feeds dropped, everything else kept', async (t) => {
  t.equal(v('s3cr3t\n'), 's3cr3t', 'echo s3cr3t > file');
  t.equal(v('s3cr3t'), 's3cr3t', 'kubectl create secret --from-literal: no newline');
  t.equal(v('a\n\n\n'), 'a', 'every trailing line feed, as command substitution');
  t.equal(v('-----BEGIN KEY-----\nAAAA\n-----END KEY-----\n'), '-----BEGIN KEY-----\nAAAA\n-----END KEY-----', 'inner newlines kept');
  t.equal(v('a\r\n'), 'a\r', 'a carriage return is kept');
  t.equal(v('  spaced  \t'), '  spaced  \t', 'blanks kept');
  t.equal(v(''), '', 'an empty file is an empty value');
  t.equal(v('\n'), '');
  t.equal(v('é€😀\n'), 'é€😀');
  t.equal(v(new Uint8Array([0xef, 0xbb, 0xbf, 0x61])), '\ufeffa', 'a byte-order mark is a byte of the value');
});

t.test('NUL and invalid UTF-8 refused, without a byte of the file', async (t) => {
  const CANARY = 'CANARY-fv-31';
  t.throws(() => v(`${CANARY}\0x`), new FileValueError('contains a NUL byte (a variable cannot hold one)'));
  t.throws(
    () => v(Buffer.concat([Buffer.from(CANARY), Buffer.from([0xc3, 0x28])])),
    new FileValueError("is not valid UTF-8 (a variable in the runtime's JSON spec must be text)"),
  );
  t.throws(() => v(new Uint8Array([0xed, 0xa0, 0x80])), FileValueError, 'a surrogate');
});
