import t from 'tap';
import crypto from 'node:crypto';
import fc from 'fast-check';
import { sha256Hex } from '../../src/plan/sha256.ts';

const nodeSha = (s: string) => crypto.createHash('sha256').update(s).digest('hex');

t.test('known vectors', async (t) => {
  t.equal(sha256Hex(''), 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  t.equal(sha256Hex('abc'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  t.equal(
    sha256Hex('abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq'),
    '248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1',
  );
});

t.test('equals node:crypto on every length around the block boundaries and on random text', async (t) => {
  for (let n = 0; n < 300; n++) t.equal(sha256Hex('é'.repeat(n % 7) + 'x'.repeat(n)), nodeSha('é'.repeat(n % 7) + 'x'.repeat(n)));
  fc.assert(
    fc.property(fc.string({ unit: 'binary', maxLength: 3000 }), (s) => sha256Hex(s) === nodeSha(s)),
    { numRuns: 2000 },
  );
  t.equal(sha256Hex('y'.repeat(300_000)), nodeSha('y'.repeat(300_000)));
});
