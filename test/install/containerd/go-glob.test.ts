// Go's filepath.Glob as containerd expands imports with it: the order of the matches is the merge
// order, so it is checked on a real directory tree (names sorted bytewise, dot files matched,
// patterns in directory components, classes, escapes, malformed patterns).
import t, { type Test } from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { goGlob, hasMeta } from '../../../src/install/containerd/go-glob.ts';

function tree(t: Test) {
  const dir = t.testdir({
    a: {
      x: { '1.toml': '', 'B.toml': '', 'b.toml': '', '.hidden.toml': '', 'c.conf': '', 'sub.toml': {} },
      y: { '2.toml': '' },
      'file.toml': '',
    },
  });
  const list = (p: string) => {
    try {
      return fs.readdirSync(p);
    } catch {
      return undefined;
    }
  };
  return { dir, glob: (p: string) => goGlob(path.join(dir, p), list).map((m) => path.relative(dir, m)) };
}

t.test('* matches any name in the directory, dot files too, in byte order', async (t) => {
  const { glob } = tree(t);
  t.same(glob('a/x/*.toml'), ['a/x/.hidden.toml', 'a/x/1.toml', 'a/x/B.toml', 'a/x/b.toml', 'a/x/sub.toml']);
  t.same(glob('a/x/*'), ['a/x/.hidden.toml', 'a/x/1.toml', 'a/x/B.toml', 'a/x/b.toml', 'a/x/c.conf', 'a/x/sub.toml']);
});

t.test('patterns in directory components: directory by directory; files in place of a directory are skipped', async (t) => {
  const { glob } = tree(t);
  t.same(glob('a/*/*.toml'), ['a/x/.hidden.toml', 'a/x/1.toml', 'a/x/B.toml', 'a/x/b.toml', 'a/x/sub.toml', 'a/y/2.toml']);
  t.same(glob('*/file.toml/*'), []);
  t.same(glob('nope/*.toml'), [], 'a missing directory matches nothing');
});

t.test('?, classes, negated classes, ranges, escapes', async (t) => {
  const { glob } = tree(t);
  t.same(glob('a/x/?.toml'), ['a/x/1.toml', 'a/x/B.toml', 'a/x/b.toml']);
  t.same(glob('a/x/[a-z].toml'), ['a/x/b.toml']);
  t.same(glob('a/x/[^a-z].toml'), ['a/x/1.toml', 'a/x/B.toml']);
  t.same(glob('a/x/\\b.toml'), ['a/x/b.toml']);
  t.same(glob('a/x/b.toml'), ['a/x/b.toml'], 'no meta: the path when it exists');
  t.same(glob('a/x/z.toml'), []);
});

t.test('malformed patterns are refused as containerd would fail on them', async (t) => {
  const { glob } = tree(t);
  t.throws(() => glob('a/x/[.toml'), /import pattern ".*" is malformed \(containerd would fail to start\)/);
  t.throws(() => glob('a/x/[].toml'), /malformed/);
  t.throws(() => glob('a/x/*\\'), /malformed/);
});

t.test('hasMeta', async (t) => {
  t.ok(hasMeta('/a/*.toml'));
  t.ok(hasMeta('/a/[x]'));
  t.notOk(hasMeta('/a/b.toml'));
});
