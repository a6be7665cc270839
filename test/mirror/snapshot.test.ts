// The payload measured whole (nothing read) and checked, on real files laid out by the atomic-writer double.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { atomicWrite } from '../../scripts/kubelet-pod.ts';
import { closeDataDir, openDataDir } from '../../src/fs/datadir.ts';
import { readSnapshot, type CopyLimits, type CopyOwners } from '../../src/mirror/snapshot.ts';
import { drain } from '../../src/mirror/steps.ts';

const none: CopyOwners = { defaultOwner: undefined, items: new Map() };

function snap(dir: string, owners: CopyOwners = none, limits?: CopyLimits) {
  const data = openDataDir('v', dir);
  try {
    return drain(readSnapshot('v', data.fd, owners, limits));
  } finally {
    closeDataDir(data);
  }
}

t.test('every file with its final owner, the kubelet group and mode; directories before their files', async (t) => {
  const vol = path.join(t.testdir({}), 'vol');
  const ts = atomicWrite(vol, { a: { data: 'A', mode: 0o400 }, 'sub/b': 'BB', 'sub/deep/c': { data: 'C', mode: 0o440 } });
  fs.chownSync(path.join(ts, 'a'), 0, 55);
  const s = snap(vol, { defaultOwner: { hostUid: 1000 }, items: new Map([['sub/deep/c', { hostUid: 1001 }]]) });
  t.same(
    s.entries.map((e) => [e.rel, e.kind, e.uid, e.gid, e.mode.toString(8), e.size]),
    [
      ['a', 'file', 1000, 55, '400', 1],
      ['sub', 'dir', 0, 0, '755', 0],
      ['sub/b', 'file', 1000, 0, '644', 2],
      ['sub/deep', 'dir', 0, 0, '755', 0],
      ['sub/deep/c', 'file', 1001, 0, '440', 1],
    ],
  );
  t.same(s.visible, ['a', 'sub']);
  t.same([s.files, s.bytes], [3, 4]);
  t.same(s.root, { mode: 0o755, uid: 0, gid: 0 });
  t.equal(fs.lstatSync(path.join(ts, 'a')).uid, 0, "the kubelet's file is left as it was");
});

t.test('no owner: the kubelet owner is kept', async (t) => {
  const vol = path.join(t.testdir({}), 'vol');
  const ts = atomicWrite(vol, { a: 'A' });
  fs.chownSync(path.join(ts, 'a'), 7, 8);
  t.match(snap(vol).entries, [{ rel: 'a', uid: 7, gid: 8 }]);
});

const refusals: [string, (ts: string, dir: string) => void, RegExp][] = [
  [
    'a hard link',
    (ts) => fs.linkSync(path.join(ts, 'z'), path.join(ts, 'y')),
    /^volume "v": file "y" has 2 hard links; refusing to copy it$/,
  ],
  ['a symlink', (ts) => fs.symlinkSync('/etc/shadow', path.join(ts, 'y')), /^volume "v": "y" is a symbolic link: refusing to copy it$/],
  ['a FIFO', (ts) => execFileSync('mkfifo', [path.join(ts, 'y')]), /^volume "v": "y" is a FIFO: refusing to copy it$/],
  [
    'a device',
    (ts) => execFileSync('mknod', [path.join(ts, 'y'), 'c', '1', '3']),
    /^volume "v": "y" is a character device: refusing to copy it$/,
  ],
];
for (const [what, plant, message] of refusals) {
  t.test(`${what} anywhere fails the whole snapshot`, async (t) => {
    const vol = path.join(t.testdir({}), 'vol');
    const files: Record<string, string> = {};
    for (let i = 0; i < 21; i++) files[`f${String(i).padStart(2, '0')}`] = 'x';
    const ts = atomicWrite(vol, { ...files, z: 'z' });
    plant(ts, vol);
    t.throws(() => snap(vol, { defaultOwner: { hostUid: 1000 }, items: new Map() }), message);
  });
}

t.test('a mount point inside the volume is refused', async (t) => {
  const vol = path.join(t.testdir({}), 'vol');
  const ts = atomicWrite(vol, { 'sub/a': 'A' });
  execFileSync('mount', ['-t', 'tmpfs', 'tmpfs', path.join(ts, 'sub')]);
  try {
    t.throws(() => snap(vol), /^volume "v": directory "sub" is a mount point \(another file system inside the volume\)$/);
  } finally {
    execFileSync('umount', [path.join(ts, 'sub')]);
  }
});

t.test('the size limit and the entry limit, with a clear line', async (t) => {
  const vol = path.join(t.testdir({}), 'vol');
  atomicWrite(vol, { a: 'x'.repeat(600), b: 'y'.repeat(600) });
  t.throws(() => snap(vol, none, { maxBytes: 1000, maxEntries: 10 }), {
    message: 'volume "v": larger than 0 MiB, the limit of envhook\'s owned copy of a volume',
  });
  t.throws(() => snap(vol, none, { maxBytes: 1 << 20, maxEntries: 1 }), { message: 'volume "v": more than 1 files and directories' });
  t.equal(snap(vol, none, { maxBytes: 1200, maxEntries: 2 }).bytes, 1200, 'exactly at the limits is fine');
});

t.test('a name that is not valid UTF-8: refused, the name described, never printed', async (t) => {
  const vol = path.join(t.testdir({}), 'vol');
  const ts = atomicWrite(vol, { a: 'A', 'sub/b': 'B' });
  const bad = Buffer.from([0x6b, 0xff, 0x6b]); // "k", an invalid byte, "k"
  fs.writeFileSync(Buffer.concat([Buffer.from(`${ts}/`), bad]), 'CANARY-utf8');
  t.throws(() => snap(vol), { message: 'volume "v": a name in the payload is not valid UTF-8: refusing to copy it' });
  fs.rmSync(Buffer.concat([Buffer.from(`${ts}/`), bad]));
  fs.writeFileSync(Buffer.concat([Buffer.from(`${ts}/sub/`), bad]), 'CANARY-utf8');
  t.throws(() => snap(vol), { message: 'volume "v": a name in directory "sub" is not valid UTF-8: refusing to copy it' });
  // U+FFFD itself, written as UTF-8, is a valid name like any other.
  fs.rmSync(Buffer.concat([Buffer.from(`${ts}/sub/`), bad]));
  fs.writeFileSync(path.join(ts, 'k\ufffdk'), 'X');
  t.same(
    snap(vol).entries.map((e) => e.rel),
    ['a', 'k\ufffdk', 'sub', 'sub/b'],
  );
});

t.test('a directory of many entries is refused at the first past the limit, never listed whole', async (t) => {
  const vol = path.join(t.testdir({}), 'vol');
  const payload: Record<string, string> = {};
  for (let i = 0; i < 3000; i++) payload[`many/f${i}`] = '';
  atomicWrite(vol, payload);
  const real = await import('../../src/fs/bounded-dir.ts');
  let read = 0;
  const counting: typeof real.listBounded = (dir, max) =>
    real.listBounded(dir, max, (d) => {
      const r = fs.opendirSync(d, {
        encoding: 'buffer' as BufferEncoding,
        bufferSize: 32,
      }) as unknown as import('../../src/fs/bounded-dir.ts').DirReader;
      return { readSync: () => (read++, r.readSync()), closeSync: () => r.closeSync() };
    });
  const { readSnapshot: mocked } = await t.mockImport<typeof import('../../src/mirror/snapshot.ts')>('../../src/mirror/snapshot.ts', {
    '../../src/fs/bounded-dir.ts': { ...real, listBounded: counting },
    // The same ConfinedError class the real bounded reader throws.
    '../../src/fs/confined.ts': await import('../../src/fs/confined.ts'),
  });
  const data = openDataDir('v', vol);
  t.teardown(() => closeDataDir(data));
  t.throws(() => drain(mocked('v', data.fd, none, { maxBytes: 1 << 20, maxEntries: 100 })), {
    message: 'volume "v": more than 100 files and directories',
  });
  // The payload's top level (one entry and its end), then "many" up to the entry past what is left (99).
  t.ok(read <= 2 + 100, `${read} entries read of the 3,000 in the directory`);
});
