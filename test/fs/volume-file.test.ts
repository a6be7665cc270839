// Env files of atomic-writer and CSI volumes (docs/design.md#env-from-other-volumes), on pods laid out as the kubelet lays
// them out: read through `..data`, with the emptyDir's confinement below it; hostile layouts
// (a symlink out, `..data` out, a FIFO, an over-size file) refused with a reason, never a byte.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { closeVolume, EntryError, openVolume, readHeldVolumeFileUnless, readVolumeDir, readVolumeFile } from '../../src/fs/volume-file.ts';
import { ConfinedError } from '../../src/fs/confined.ts';
import { atomicVolumeDir, atomicWrite, makePod } from '../../scripts/kubelet-pod.ts';

const LIMIT = 64 * 1024;
const CANARY = 'CANARY-volfile-5e1';

function failure(fn: () => unknown): { reason: string; notFound: boolean } {
  try {
    fn();
  } catch (err) {
    if (err instanceof ConfinedError) return { reason: err.reason, notFound: err.notFound };
    throw err;
  }
  return { reason: 'no error', notFound: false };
}

t.test('each volume kind, through ..data where there is one', async (t) => {
  const pod = makePod(path.join(t.testdir({}), 'kubelet'), {
    emptyDirs: { env: { 'a.env': 'E' } },
    atomic: [
      { plugin: 'secret', name: 'db', payload: { password: 'S', 'nested/key': 'N' } },
      { plugin: 'configmap', name: 'cfg', payload: { 'app.env': 'C' } },
      { plugin: 'projected', name: 'all', payload: { token: 'P' } },
      { plugin: 'downward-api', name: 'info', payload: { labels: 'L' } },
    ],
    csi: [
      { name: 'vault', layout: 'atomic', files: { password: 'V' } },
      { name: 'plain', layout: 'plain', files: { 'sub/password': 'W' } },
    ],
  });
  const vol = (plugin: string, name: string) => path.join(pod.dir, 'volumes', `kubernetes.io~${plugin}`, name);
  const read = (dir: string, rel: string, viaData = true) => readVolumeFile(dir, viaData, rel, LIMIT).toString();
  t.equal(read(pod.emptyDir('env'), 'a.env', false), 'E');
  t.equal(read(vol('secret', 'db'), 'password'), 'S', 'the visible name is a symlink; the file is read in ..data');
  t.equal(read(vol('secret', 'db'), 'nested/key'), 'N');
  t.equal(read(vol('configmap', 'cfg'), 'app.env'), 'C');
  t.equal(read(vol('projected', 'all'), 'token'), 'P');
  t.equal(read(vol('downward-api', 'info'), 'labels'), 'L');
  t.equal(read(pod.csiMount('vault'), 'password'), 'V', 'a CSI driver that writes as the atomic writer does');
  t.equal(read(pod.csiMount('plain'), 'sub/password'), 'W', 'a CSI driver that writes plain files');
  t.same(
    failure(() => read(vol('secret', 'db'), 'password', false)),
    { reason: 'is a symbolic link', notFound: false },
    "without ..data the writer's links are not followed",
  );
  t.same(
    failure(() => read(vol('secret', 'db'), 'gone')),
    { reason: 'not found', notFound: true },
  );
  t.same(
    failure(() => read(vol('secret', 'db'), '..data/password')),
    { reason: 'not found', notFound: true },
    "the layout's own names are not paths",
  );
});

t.test('a CSI volume that is not mounted: its files are missing', async (t) => {
  const pod = makePod(path.join(t.testdir({}), 'kubelet'), { csi: [{ name: 'vault', layout: 'unmounted' }] });
  t.ok(fs.existsSync(path.join(path.dirname(pod.csiMount('vault')), 'vol_data.json')));
  t.same(
    failure(() => readVolumeFile(pod.csiMount('vault'), true, 'password', LIMIT)),
    { reason: 'not found', notFound: true },
  );
  fs.mkdirSync(pod.csiMount('vault'));
  t.same(
    failure(() => readVolumeFile(pod.csiMount('vault'), true, 'password', LIMIT)),
    { reason: 'not found', notFound: true },
    'mount point left empty by a failed driver',
  );
});

t.test('a volume held open: ..data followed at each read, a bad path refused before the volume is opened', async (t) => {
  const pod = makePod(path.join(t.testdir({}), 'kubelet'), { atomic: [{ plugin: 'secret', name: 'db', payload: { a: 'A1', b: 'B1' } }] });
  const dir = atomicVolumeDir(pod, 'secret', 'db');
  const fds = () => fs.readdirSync('/proc/self/fd').length;
  const before = fds();
  let opened = 0;
  let held: ReturnType<typeof openVolume> | undefined;
  const volume = () => (held ??= (opened++, openVolume(dir, true)));
  const read = (rel: string) => readHeldVolumeFileUnless(volume, rel, LIMIT, () => false)!.toString();
  t.same(
    failure(() => read('../x')),
    { reason: "path must not contain '..'", notFound: false },
  );
  t.equal(opened, 0, 'the path is checked before the volume is opened');
  t.equal(read('a'), 'A1');
  atomicWrite(dir, { a: 'A2', b: 'B2' });
  t.equal(read('b'), 'B2', 'the payload ..data names at the read: the writer removed the one it replaced');
  t.equal(opened, 1, 'opened once for both reads');
  t.equal(fds(), before + 1, 'the volume directory held, nothing else');
  closeVolume(held!);
  t.equal(fds(), before, 'closeVolume releases it');
  t.equal(readVolumeFile(dir, true, 'b', LIMIT).toString(), 'B2', 'a new read sees the new payload');
  t.equal(fds(), before, 'readVolumeFile holds nothing');
  let asked = 0;
  const again = openVolume(dir, true);
  t.teardown(() => closeVolume(again));
  t.equal(
    readHeldVolumeFileUnless(
      () => again,
      'a',
      LIMIT,
      () => (asked++, true),
    ),
    undefined,
    'known: not read',
  );
  t.equal(asked, 1);
});

t.test('hostile layouts', async (t) => {
  const root = t.testdir({ outside: { 'secret.env': `SECRET='${CANARY}'\n` } });
  const outside = path.join(root, 'outside');
  const pod = makePod(path.join(root, 'kubelet'), {
    atomic: [{ plugin: 'secret', name: 'db', payload: { password: 'ok', fifo: 'x', big: 'x', link: 'x' } }],
  });
  const dir = atomicVolumeDir(pod, 'secret', 'db');
  const ts = path.join(dir, fs.readlinkSync(path.join(dir, '..data')));
  const read = (rel: string) => failure(() => readVolumeFile(dir, true, rel, LIMIT));

  fs.rmSync(path.join(ts, 'link'));
  fs.symlinkSync(path.join(outside, 'secret.env'), path.join(ts, 'link'));
  t.same(read('link'), { reason: 'is a symbolic link', notFound: false }, 'a symlink out of the volume, inside ..data');
  fs.rmSync(path.join(ts, 'fifo'));
  execFileSync('mkfifo', [path.join(ts, 'fifo')]);
  t.same(read('fifo'), { reason: 'is a FIFO', notFound: false }, 'a FIFO is refused without blocking');
  fs.writeFileSync(path.join(ts, 'big'), 'x'.repeat(LIMIT + 1));
  t.same(read('big'), { reason: `larger than ${LIMIT} bytes`, notFound: false });
  t.same(read('password'), { reason: 'no error', notFound: false });

  const swap = (target: string) => {
    fs.rmSync(path.join(dir, '..data'));
    fs.symlinkSync(target, path.join(dir, '..data'));
  };
  swap(outside);
  t.same(
    read('password'),
    { reason: '..data does not point to a timestamped directory inside the volume', notFound: false },
    '..data pointing outside',
  );
  swap('../../../../../outside');
  t.same(read('secret.env'), { reason: '..data does not point to a timestamped directory inside the volume', notFound: false });
  fs.symlinkSync(outside, path.join(dir, '..evil'));
  swap('..evil');
  t.same(
    read('secret.env'),
    { reason: '..data points to "..evil": a path element is a symbolic link', notFound: false },
    'a timestamped name that is itself a link out',
  );
  swap('..gone');
  t.same(
    read('password'),
    { reason: '..data points to "..gone": not found', notFound: false },
    'a dangling ..data is a broken volume, not a missing file',
  );
  fs.rmSync(path.join(dir, '..data'));
  fs.mkdirSync(path.join(dir, '..data'));
  t.same(read('password'), { reason: '..data is not a symbolic link', notFound: false });
  fs.rmSync(dir, { recursive: true });
  fs.symlinkSync(outside, dir);
  t.same(read('secret.env'), { reason: 'a path element is a symbolic link', notFound: false }, 'the volume directory itself a link out');
});

t.test('readVolumeDir: the regular files of a directory, by name; nothing else opened', async (t) => {
  const root = t.testdir({ outside: { 'secret.env': CANARY } });
  const pod = makePod(path.join(root, 'kubelet'), {
    emptyDirs: { env: { B: 'b', A: 'a', '..hidden': 'x', 'sub/C': 'c', 'a=b': 'skip' } },
    atomic: [{ plugin: 'secret', name: 'db', payload: { username: 'u', password: 'p', 'nested/deep': 'd' } }],
  });
  const ascii = (name: Buffer) => !name.includes(0x3d) && name.every((b) => b >= 0x20 && b < 0x7f);
  const opts = { limit: LIMIT, totalLimit: 4 * LIMIT, maxEntries: 16, wanted: ascii };
  const read = (dir: string, viaData: boolean, rel?: string) => {
    const r = readVolumeDir(dir, viaData, rel, opts);
    return { files: r.files.map((f) => [f.name, f.bytes.toString()]), skipped: r.skipped };
  };
  const db = atomicVolumeDir(pod, 'secret', 'db');
  t.same(
    read(db, true),
    {
      files: [
        ['password', 'p'],
        ['username', 'u'],
      ],
      skipped: [],
    },
    'the data directory: real files, subdirectories passed over',
  );
  t.same(read(db, true, 'nested'), { files: [['deep', 'd']], skipped: [] });
  t.same(
    read(pod.emptyDir('env'), false),
    {
      files: [
        ['A', 'a'],
        ['B', 'b'],
      ],
      skipped: ['a=b'],
    },
    '..names passed over in a plain directory, unwanted names never opened',
  );
  t.same(read(pod.emptyDir('env'), false, 'sub'), { files: [['C', 'c']], skipped: [] });
  const missing = t.throws(() => readVolumeDir(pod.emptyDir('env'), false, 'nope', opts)) as ConfinedError;
  t.equal(missing.notFound, true);

  const env = pod.emptyDir('env');
  fs.symlinkSync(path.join(root, 'outside/secret.env'), path.join(env, 'LINK'));
  const link = t.throws(() => readVolumeDir(env, false, undefined, opts)) as EntryError;
  t.same(
    [link.constructor.name, link.entry, link.reason],
    ['EntryError', 'LINK', 'is a symbolic link'],
    'a symlink out is refused, not followed',
  );
  fs.rmSync(path.join(env, 'LINK'));
  fs.symlinkSync(path.join(root, 'outside/secret.env'), path.join(env, 'x=link'));
  t.same(read(env, false).skipped, ['a=b', 'x=link'], 'an unwanted symlink is only listed');
  execFileSync('mkfifo', [path.join(env, 'FIFO')]);
  const fifo = t.throws(() => readVolumeDir(env, false, undefined, opts)) as EntryError;
  t.same([fifo.entry, fifo.reason], ['FIFO', 'is a FIFO']);
  fs.rmSync(path.join(env, 'FIFO'));
  fs.writeFileSync(path.join(env, 'BIG'), 'x'.repeat(LIMIT + 1));
  t.same((t.throws(() => readVolumeDir(env, false, undefined, opts)) as EntryError).reason, `larger than ${LIMIT} bytes`);
  fs.rmSync(path.join(env, 'BIG'));
  for (const f of ['C1', 'C2', 'C3', 'C4', 'C5']) fs.writeFileSync(path.join(env, f), 'x'.repeat(LIMIT));
  t.equal(
    (t.throws(() => readVolumeDir(env, false, undefined, opts)) as ConfinedError).reason,
    `has files larger than ${4 * LIMIT} bytes together`,
    'read no further than the total',
  );
  for (const f of ['C1', 'C2', 'C3', 'C4', 'C5']) fs.rmSync(path.join(env, f));
  fs.writeFileSync(Buffer.concat([Buffer.from(env + '/'), Buffer.from([0xff, 0x41])]), 'x');
  t.same(read(env, false).skipped, ['\ufffdA', 'a=b', 'x=link'].sort(), 'a name that is not UTF-8 is listed, never opened');
  for (let i = 0; i < 16; i++) fs.writeFileSync(path.join(env, `F${i}`), '');
  t.equal((t.throws(() => readVolumeDir(env, false, undefined, opts)) as ConfinedError).reason, 'has more than 16 entries');

  const ts = path.join(db, fs.readlinkSync(path.join(db, '..data')));
  fs.symlinkSync(path.join(root, 'outside'), path.join(ts, 'evil'));
  t.same(
    (t.throws(() => readVolumeDir(db, true, undefined, opts)) as EntryError).reason,
    'is a symbolic link',
    'a symlink to a directory out of the volume is refused',
  );
  t.same((t.throws(() => readVolumeDir(db, true, 'evil', opts)) as ConfinedError).reason, 'a path element is a symbolic link');
});
