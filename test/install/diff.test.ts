// unifiedDiff: the dry run's line diff of an admin's config, hunks with three lines of context,
// numbered as `diff -u` numbers them, and a file without a final newline marked as such.
import t from 'tap';
import { unifiedDiff } from '../../src/install/diff.ts';

const lines = (n: number, from = 1) => Array.from({ length: n }, (_, i) => `line ${i + from}`);

t.test('equal texts: no diff at all', async (t) => {
  t.equal(unifiedDiff('a\nb\n', 'a\nb\n', '/etc/x'), '');
});

t.test('a file created and a file removed: one hunk against nothing', async (t) => {
  t.equal(unifiedDiff('', 'a\nb\n', '/etc/x.toml'), '--- /etc/x.toml\n+++ /etc/x.toml\n@@ -0,0 +1,2 @@\n+a\n+b\n');
  t.equal(unifiedDiff('a\n', '', '/etc/x.toml'), '--- /etc/x.toml\n+++ /etc/x.toml\n@@ -1,1 +0,0 @@\n-a\n');
});

t.test('a changed line in the middle: three lines of context either side', async (t) => {
  const before = lines(10).join('\n') + '\n';
  const after = before.replace('line 5\n', 'line five\n');
  t.equal(
    unifiedDiff(before, after, 'f'),
    ['--- f', '+++ f', '@@ -2,7 +2,7 @@', 'line 2', 'line 3', 'line 4', '-line 5', '+line five', 'line 6', 'line 7', 'line 8', '']
      .join('\n')
      .replace(/^line/gm, ' line'),
  );
});

t.test('changes more than six lines apart make two hunks; closer ones share one', async (t) => {
  const before = lines(30).join('\n') + '\n';
  const far = before.replace('line 3\n', 'x\n').replace('line 20\n', 'y\n');
  const hunks = unifiedDiff(before, far, 'f').match(/^@@ .* @@$/gm);
  t.same(hunks, ['@@ -1,6 +1,6 @@', '@@ -17,7 +17,7 @@']);
  const near = before.replace('line 3\n', 'x\n').replace('line 9\n', 'y\n');
  t.same(unifiedDiff(before, near, 'f').match(/^@@ .* @@$/gm), ['@@ -1,12 +1,12 @@']);
});

t.test('an appended block: the added lines after the last three lines of the file', async (t) => {
  const before = 'version = 2\n[a]\nk = 1\n';
  const after = before + '\n# BEGIN envhook\nx = 1\n# END envhook\n';
  t.equal(
    unifiedDiff(before, after, 'c'),
    '--- c\n+++ c\n@@ -1,3 +1,7 @@\n version = 2\n [a]\n k = 1\n+\n+# BEGIN envhook\n+x = 1\n+# END envhook\n',
  );
});

t.test('no newline at the end: the last line says so, and adding one is a change', async (t) => {
  t.equal(unifiedDiff('a\nb', 'a\nb\n', 'f'), '--- f\n+++ f\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n');
});
