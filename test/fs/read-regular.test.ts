// A file named on the command line: at most `limit` bytes of a regular file; a FIFO, a device or
// a directory refused without blocking; a missing or unreadable one named with its errno code.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { readRegularFile } from '../../src/fs/read-regular.ts';

const text = (b: Uint8Array) => Buffer.from(b).toString();

t.test('a regular file, whole or cut at the limit; a symlink is followed', async (t) => {
  const dir = t.testdir({ 'a.yaml': 'kind: Pod\n', 'link.yaml': t.fixture('symlink', 'a.yaml'), empty: '' });
  t.equal(text(readRegularFile(path.join(dir, 'a.yaml'), 100)), 'kind: Pod\n');
  t.equal(text(readRegularFile(path.join(dir, 'a.yaml'), 4)), 'kind', 'a caller sees limit bytes and knows it is cut');
  t.equal(text(readRegularFile(path.join(dir, 'link.yaml'), 100)), 'kind: Pod\n');
  t.equal(readRegularFile(path.join(dir, 'empty'), 100).length, 0);
});

// A FIFO without a writer would block a plain open forever: returning at all is the proof.
t.test('not a regular file: one line, nothing read, nothing blocking', async (t) => {
  const dir = t.testdir({ sub: {} });
  const fifo = path.join(dir, 'fifo');
  execFileSync('mkfifo', [fifo]);
  t.throws(() => readRegularFile(fifo, 100), { message: `${fifo}: not a regular file` });
  t.throws(() => readRegularFile('/dev/zero', 100), { message: '/dev/zero: not a regular file' });
  t.throws(() => readRegularFile(path.join(dir, 'sub'), 100), { message: `${path.join(dir, 'sub')}: not a regular file` });
});

t.test('missing: the errno code, never a foreign message', async (t) => {
  const missing = path.join(t.testdir(), 'none.yaml');
  t.throws(() => readRegularFile(missing, 100), { message: `cannot read ${missing}: no such file or directory (ENOENT)` });
  const notDir = path.join(t.testdir({ f: 'x' }), 'f', 'x.yaml');
  t.throws(() => readRegularFile(notDir, 100), { message: `cannot read ${notDir}: a part of the path is not a directory (ENOTDIR)` });
});

t.test('every descriptor it opens is closed, on success and on failure', async (t) => {
  const dir = t.testdir({ 'a.yaml': 'x' });
  const fds = () => fs.readdirSync('/proc/self/fd').length;
  const before = fds();
  for (let i = 0; i < 20; i++) {
    readRegularFile(path.join(dir, 'a.yaml'), 10);
    t.throws(() => readRegularFile(dir, 10));
  }
  t.equal(fds(), before);
});
