import t from 'tap';
import { splitBlock, withBlock } from '../../src/install/block.ts';
import { unifiedDiff } from '../../src/install/diff.ts';

t.test('a block is appended after one blank line and removed exactly', async (t) => {
  for (const admin of ['', 'a = 1\n', 'a = 1\n\n', '# only a comment\n']) {
    const withIt = withBlock(admin, 'x = 1\n', 'f');
    t.match(withIt, /# BEGIN envhook[^\n]*\nx = 1\n# END envhook\n$/);
    t.equal(splitBlock(withIt, 'f').rest, admin, JSON.stringify(admin));
  }
});

t.test('a file without a final newline gets one back (the backup restores the exact bytes)', async (t) => {
  t.equal(splitBlock(withBlock('a = 1', 'x = 1', 'f'), 'f').rest, 'a = 1\n');
});

t.test('a second block replaces the first in place; text after the block is kept', async (t) => {
  const once = withBlock('a = 1\n', 'x = 1\n', 'f') + '# admin line after\n';
  const twice = withBlock(once, 'x = 2\n', 'f');
  t.match(twice, /x = 2\n# END envhook\n# admin line after\n$/);
  t.notMatch(twice, /x = 1/);
  t.equal(splitBlock(twice, 'f').rest, 'a = 1\n\n# admin line after\n');
});

t.test('an unterminated or doubled block is refused', async (t) => {
  t.throws(() => splitBlock('# BEGIN envhook\nx = 1\n', 'f.toml'), /f\.toml: "# BEGIN envhook" without "# END envhook"/);
  const b = withBlock('', 'x = 1', 'f');
  t.throws(() => splitBlock(b + b, 'f'), /more than one envhook block/);
});

t.test('unified diff', async (t) => {
  t.equal(unifiedDiff('a\nb\n', 'a\nb\n', 'f'), '');
  t.equal(unifiedDiff('a\nb\nc\n', 'a\nB\nc\n', 'f'), '--- f\n+++ f\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n');
  t.equal(unifiedDiff('', 'x\n', 'f'), '--- f\n+++ f\n@@ -0,0 +1,1 @@\n+x\n');
  const long = Array.from({ length: 20 }, (_, i) => `l${i}`).join('\n') + '\n';
  const d = unifiedDiff(long, long.replace('l1\n', 'L1\n').replace('l18\n', 'L18\n'), 'f');
  t.equal(d.match(/^@@/gm)?.length, 2, 'far-apart changes make two hunks');
});
