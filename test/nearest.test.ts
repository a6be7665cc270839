// "Did you mean": the closest name within a third of the misspelt one's length (1 to 3 edits).
import t from 'tap';
import { didYouMean, nearest } from '../src/nearest.ts';

t.test('a typo finds its name; a different name finds nothing', async (t) => {
  t.equal(nearest('mian', ['main', 'db']), 'main', 'a transposition is one edit');
  t.equal(nearest('contig', ['config', 'certs']), 'config');
  t.equal(nearest('db', ['app']), undefined);
  t.equal(nearest('x', []), undefined);
  t.equal(nearest('same', ['same']), 'same');
});

t.test('how far counts as a typo: a third of the name, at least 1, at most 3', async (t) => {
  t.equal(nearest('ab', ['xb']), 'xb', 'a short name allows one edit');
  t.equal(nearest('ab', ['xy']), undefined);
  t.equal(nearest('abcdef', ['abxyef']), 'abxyef', 'six letters: two edits');
  t.equal(nearest('abcdef', ['axyzef']), undefined, 'not three');
  t.equal(nearest('abcdefghijklmnop', ['abcXYZghijklmnop']), 'abcXYZghijklmnop', 'three at most…');
  t.equal(nearest('abcdefghijklmnop', ['aWXYZfghijklmnop']), undefined, '…even for a long name');
});

t.test('the closest wins; the first of equals', async (t) => {
  t.equal(nearest('confg', ['conf', 'config']), 'conf');
  t.equal(nearest('cat', ['bat', 'car']), 'bat');
});

t.test('names over 256 characters are not compared (no quadratic work on hostile input)', async (t) => {
  const long = 'a'.repeat(257);
  t.equal(nearest(long, [long]), undefined);
});

t.test('didYouMean: the suffix of a message, or nothing', async (t) => {
  t.equal(didYouMean('mian', ['main']), ' (did you mean "main"?)');
  t.equal(didYouMean('zzz', ['main']), '');
});
