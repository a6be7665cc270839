// A pod-controlled directory is listed no further than its limit: on a real directory of 20,000
// files, the listing reads at most limit + 1 entries (counted through the reader it is given)
// and is refused with the limit; at or under the limit, every entry, names as bytes.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { listBounded, type DirReader } from '../../src/fs/bounded-dir.ts';
import { ConfinedError } from '../../src/fs/confined.ts';

const FILES = 20_000;

/** A directory of `n` empty files F00000…, made once for the file. */
function bigDir(n: number): string {
  const dir = t.testdir({});
  for (let i = 0; i < n; i++) fs.closeSync(fs.openSync(path.join(dir, `F${String(i).padStart(5, '0')}`), 'w'));
  return dir;
}

/** fs.opendirSync as listBounded opens it, counting the entries handed out. */
function counting(): { open: (dir: string) => DirReader; read: () => number; closed: () => boolean } {
  let read = 0;
  let closed = false;
  const open = (dir: string): DirReader => {
    const d = fs.opendirSync(dir, { encoding: 'buffer' as BufferEncoding });
    return {
      readSync: () => {
        const e = d.readSync() as unknown as fs.Dirent<Buffer> | null;
        if (e) read++;
        return e;
      },
      closeSync: () => {
        closed = true;
        d.closeSync();
      },
    };
  };
  return { open, read: () => read, closed: () => closed };
}

const dir = bigDir(FILES);

t.test('20,000 files, limit 1024: refused with the limit after reading 1025 entries', async (t) => {
  const c = counting();
  const err = t.throws(() => listBounded(dir, 1024, c.open)) as ConfinedError;
  t.ok(err instanceof ConfinedError);
  t.equal(err.message, 'has more than 1024 entries');
  t.equal(c.read(), 1025, 'no entry read past the first one beyond the limit');
  t.ok(c.closed(), 'the directory is closed');
});

t.test('the default reader refuses the same way', async (t) => {
  t.throws(() => listBounded(dir, 1024), new ConfinedError('has more than 1024 entries'));
});

t.test('at the limit or under it: every entry, names as bytes, types from getdents', async (t) => {
  const c = counting();
  const all = listBounded(dir, FILES, c.open);
  t.equal(all.length, FILES);
  t.equal(c.read(), FILES);
  t.ok(Buffer.isBuffer(all[0]!.name));
  t.ok(all.every((e) => e.isFile()));
  const small = t.testdir({ a: '', sub: {} });
  const names = listBounded(small, 2)
    .map((e) => `${e.name.toString()}:${e.isDirectory() ? 'dir' : 'file'}`)
    .sort();
  t.same(names, ['a:file', 'sub:dir']);
  t.throws(() => listBounded(small, 1), new ConfinedError('has more than 1 entries'));
});
