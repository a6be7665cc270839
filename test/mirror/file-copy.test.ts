// One payload file copied a chunk at a time: the inode and size measured, to its end; a file
// that changed since the measure is refused, never copied short or long, and its bytes never in
// the line.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { copyBuffer, copyFileContent, releaseBuffer } from '../../src/mirror/file-copy.ts';

const CANARY = 'CANARY-file-copy-0c4e';

t.test('a file larger than a chunk copied whole; a file grown, shrunk or swapped since the measure refused', async (t) => {
  const dir = t.testdir({ data: { big: CANARY + 'x'.repeat(200_000), small: CANARY } });
  const dataFd = fs.openSync(path.join(dir, 'data'), fs.constants.O_RDONLY | fs.constants.O_DIRECTORY);
  t.teardown(() => fs.closeSync(dataFd));
  const entry = (rel: string) => {
    const st = fs.lstatSync(path.join(dir, 'data', rel));
    return { rel, kind: 'file' as const, mode: 0o644, uid: 0, gid: 0, ino: st.ino, size: st.size };
  };
  const b = copyBuffer();
  const chunks: number[] = [];
  const copyTo = (e: ReturnType<typeof entry>) => {
    const out = path.join(dir, `out-${e.rel}-${Math.random()}`);
    const fd = fs.openSync(out, 'w');
    try {
      // A step per 64 KiB chunk (and one for the end of the file): the resident copier's slices (steps.ts).
      const steps = copyFileContent('v', dataFd, e, fd, b);
      let n = 0;
      while (!steps.next().done) n++;
      chunks.push(n);
    } finally {
      fs.closeSync(fd);
    }
    return fs.readFileSync(out, 'utf8');
  };
  const big = entry('big');
  t.equal(copyTo(big), CANARY + 'x'.repeat(200_000));
  t.same(chunks, [Math.ceil((CANARY.length + 200_000) / 65536)], 'one step per chunk read');
  const small = entry('small');
  fs.appendFileSync(path.join(dir, 'data', 'small'), 'more');
  const line = 'volume "v": file "small" changed while being copied: the copy is not made (the next start or rewrite copies it again)';
  t.throws(() => copyTo(small), { message: line }, 'grown');
  t.throws(() => copyTo({ ...small, size: small.size + 10 }), { message: line }, 'shrunk');
  // Another file of the same size renamed over it (made while the first exists: another inode).
  fs.writeFileSync(path.join(dir, 'data', 'small.new'), CANARY + 'more');
  fs.renameSync(path.join(dir, 'data', 'small.new'), path.join(dir, 'data', 'small'));
  const err = t.throws(() => copyTo({ ...small, size: small.size + 4 })) as Error;
  t.equal(err.message, line, 'another inode');
  t.notMatch(err.message, CANARY);
  t.throws(() => copyTo({ ...small, rel: 'none' }), { message: /^volume "v": file "none": / });
  releaseBuffer(b);
  t.ok(
    b.buf.every((x) => x === 0),
    'the chunk zeroed',
  );
});
