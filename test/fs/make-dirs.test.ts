// makeDirs: mkdir -p that returns (or throws) where Node's recursive mkdir would never return.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { makeDirs } from '../../src/fs/make-dirs.ts';

t.test('creates the missing parents with the mode; an existing directory is fine', async (t) => {
  const dir = t.testdir({ file: 'x' });
  const deep = path.join(dir, 'a/b/c');
  makeDirs(deep, 0o750);
  for (const d of ['a', 'a/b', 'a/b/c']) t.equal(fs.statSync(path.join(dir, d)).mode & 0o777, 0o750 & ~process.umask(), d);
  makeDirs(deep, 0o700);
  t.ok(fs.statSync(deep).isDirectory(), 'again: nothing to do');
  makeDirs(path.join(dir, 'file'), 0o700);
  t.ok(fs.statSync(path.join(dir, 'file')).isFile(), 'a file there is left for the caller to judge');
  t.throws(() => makeDirs(path.join(dir, 'file/x'), 0o700), { code: 'ENOTDIR' });
});

t.test('a directory that cannot exist (under /proc): ENOENT, at once', async (t) => {
  t.throws(() => makeDirs('/proc/envhook-make-dirs-test/x', 0o700), { code: 'ENOENT' });
});
