// Atomic replacement: mode and owner kept, no temporary file left, a clean error on failure.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { atomicWrite, WRITE_CHUNK } from '../../src/fs/atomic-write.ts';
import { EnvhookError } from '../../src/errors.ts';

t.test('replaces, keeping mode and owner; nothing else left in the directory', async (t) => {
  const dir = t.testdir({ 'config.json': 'old' });
  const file = path.join(dir, 'config.json');
  fs.chmodSync(file, 0o640);
  if (process.getuid?.() === 0) fs.chownSync(file, 1234, 5678);
  atomicWrite(file, 'new');
  t.equal(fs.readFileSync(file, 'utf8'), 'new');
  const st = fs.statSync(file);
  t.equal(st.mode & 0o7777, 0o640);
  if (process.getuid?.() === 0) t.same([st.uid, st.gid], [1234, 5678]);
  t.same(fs.readdirSync(dir), ['config.json']);
});

t.test('a new file: its mode, parents made on request', async (t) => {
  const dir = t.testdir({});
  const file = path.join(dir, 'a/b/f');
  atomicWrite(file, Buffer.from('x'), { mkdir: true, newFileMode: 0o600 });
  t.equal(fs.statSync(file).mode & 0o777, 0o600);
  t.throws(
    () => atomicWrite(path.join(dir, 'missing/f'), 'x'),
    new EnvhookError(`cannot write ${path.join(dir, 'missing/f')}: no such file or directory (ENOENT)`),
  );
  t.same(fs.readdirSync(dir), ['a']);
});

t.test('mode: the file gets it whatever the old file had; its owner is kept', async (t) => {
  const dir = t.testdir({ f: 'old' });
  const file = path.join(dir, 'f');
  fs.chmodSync(file, 0o644);
  fs.chownSync(file, 1234, 5678);
  atomicWrite(file, 'new', { mode: 0o600 });
  const st = fs.statSync(file);
  t.same([st.mode & 0o7777, st.uid, st.gid], [0o600, 1234, 5678]);
  atomicWrite(path.join(dir, 'g'), 'x', { mode: 0o640, newFileMode: 0o644 });
  t.equal(fs.statSync(path.join(dir, 'g')).mode & 0o7777, 0o640, 'a new file too');
});

t.test('a large file is written whole, 64 KiB at a time (the page cache keeps the write size)', async (t) => {
  const file = path.join(t.testdir(), 'envhook');
  const data = Buffer.alloc(5 * WRITE_CHUNK + 123);
  for (let i = 0; i < data.length; i++) data[i] = (i * 7) & 0xff;
  const writes: number[] = [];
  const writeSync = fs.writeSync;
  t.teardown(() => void (fs.writeSync = writeSync));
  fs.writeSync = ((fd: number, buf: Uint8Array, off: number, len: number) => {
    writes.push(len);
    return writeSync(fd, buf, off, len);
  }) as typeof fs.writeSync;
  atomicWrite(file, data, { newFileMode: 0o755 });
  fs.writeSync = writeSync;
  t.same(writes, [...Array(5).fill(WRITE_CHUNK), 123]);
  t.ok(fs.readFileSync(file).equals(data), 'every byte');
  t.equal(fs.statSync(file).mode & 0o777, 0o755);
});

t.test('durable: false replaces the same way, without an fsync of the file or the directory', async (t) => {
  const dir = t.testdir({ f: 'old' });
  const file = path.join(dir, 'f');
  const synced: number[] = [];
  const real = fs.fsyncSync;
  fs.fsyncSync = (fd: number) => {
    synced.push(fd);
    real(fd);
  };
  t.teardown(() => {
    fs.fsyncSync = real;
  });
  atomicWrite(file, 'new');
  t.equal(synced.length, 2, 'by default: the file and its directory');
  synced.length = 0;
  atomicWrite(file, 'newer', { durable: false });
  t.equal(synced.length, 0, 'durable: false: none');
  t.equal(fs.readFileSync(file, 'utf8'), 'newer');
  t.same(fs.readdirSync(dir), ['f']);
});
