// The walker and the data-directory opener on volumes laid out by the atomic-writer helper.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { atomicWrite } from '../../scripts/kubelet-pod.ts';
import { closeDataDir, isTimestampedName, openDataDir } from '../../src/fs/datadir.ts';
import { chownTree, type WalkOptions } from '../../src/ownership/walk.ts';
import { sleep } from '../helpers/wait.ts';

const owner = (uid: number) => ({ uid, hostUid: uid });
const uidOf = (p: string) => fs.lstatSync(p).uid;

function walk(dir: string, opts: Partial<WalkOptions> = {}) {
  const data = openDataDir('v', dir);
  const files: string[] = [];
  try {
    const stats = chownTree(data.fd, {
      volume: 'v',
      dev: data.dev,
      defaultOwner: owner(1000),
      items: new Map(),
      skipReserved: data.timestamped === undefined,
      dryRun: false,
      onFile: (rel) => files.push(rel),
      ...opts,
    });
    return { ...stats, files: files.sort(), timestamped: data.timestamped };
  } finally {
    closeDataDir(data);
  }
}

t.test('chowns regular data files only; group, links and directories untouched', async (t) => {
  const vol = path.join(t.testdir({}), 'vol');
  const ts = atomicWrite(vol, { a: 'A', 'sub/b': 'B', 'sub/deep/c': { data: 'C', mode: 0o400 } });
  fs.chownSync(path.join(ts, 'a'), 0, 55);
  const r = walk(vol, { items: new Map([['sub/deep/c', owner(1001)]]) });
  t.same(r, { files: ['a', 'sub/b', 'sub/deep/c'], changed: 3, timestamped: path.basename(ts) });
  t.equal(uidOf(path.join(ts, 'a')), 1000);
  t.equal(fs.lstatSync(path.join(ts, 'a')).gid, 55, 'group left as it was');
  t.equal(uidOf(path.join(ts, 'sub/deep/c')), 1001, 'the item owner wins');
  t.equal(fs.lstatSync(path.join(ts, 'sub/deep/c')).mode & 0o777, 0o400, 'mode untouched');
  for (const p of [vol, ts, path.join(ts, 'sub'), path.join(vol, 'a'), path.join(vol, 'sub'), path.join(vol, '..data')])
    t.equal(uidOf(p), 0, `${path.relative(vol, p)} not chowned`);
});

t.test('idempotent: a second run changes nothing, not even ctime', async (t) => {
  const vol = path.join(t.testdir({}), 'vol');
  const ts = atomicWrite(vol, { a: 'A', b: 'B' });
  t.equal(walk(vol).changed, 2);
  const ctime = fs.statSync(path.join(ts, 'a')).ctimeMs;
  await sleep(20);
  t.equal(walk(vol).changed, 0);
  t.equal(fs.statSync(path.join(ts, 'a')).ctimeMs, ctime);
  t.equal(walk(vol, { defaultOwner: owner(0) }).changed, 2, '0 forces root back');
  t.equal(uidOf(path.join(ts, 'a')), 0);
});

t.test('dry run plans and changes nothing; no defaultUser leaves other files alone', async (t) => {
  const vol = path.join(t.testdir({}), 'vol');
  const ts = atomicWrite(vol, { a: 'A', b: 'B' });
  t.same(walk(vol, { dryRun: true }).files, ['a', 'b']);
  t.equal(uidOf(path.join(ts, 'a')), 0);
  const r = walk(vol, { defaultOwner: undefined, items: new Map([['b', owner(7)]]) });
  t.same([r.files, r.changed], [['b'], 1]);
  t.same([uidOf(path.join(ts, 'a')), uidOf(path.join(ts, 'b'))], [0, 7]);
});

t.test('hostile volume: nothing outside is reached', async (t) => {
  const dir = t.testdir({ outside: { shadow: 'root only', dir: { x: 'x' } } });
  const outside = path.join(dir, 'outside');
  const vol = path.join(dir, 'vol');
  const ts = atomicWrite(vol, { a: 'A' });
  fs.symlinkSync(path.join(outside, 'shadow'), path.join(ts, 'evil'));
  fs.symlinkSync(path.join(outside, 'dir'), path.join(ts, 'evildir'));
  fs.symlinkSync(path.join(outside, 'shadow'), path.join(vol, 'evil-visible'));
  execFileSync('mkfifo', [path.join(ts, 'fifo')]);
  t.same(walk(vol).files, ['a'], 'links, a FIFO: skipped');
  t.equal(uidOf(path.join(outside, 'shadow')), 0);
  t.equal(uidOf(path.join(outside, 'dir/x')), 0);
  t.equal(uidOf(path.join(ts, 'fifo')), 0);

  fs.linkSync(path.join(outside, 'shadow'), path.join(ts, 'hard'));
  t.throws(() => walk(vol), { message: 'volume "v": file "hard" has 2 hard links; refusing to chown it' });
  t.equal(uidOf(path.join(outside, 'shadow')), 0, 'a hard link to an outside file is not chowned');
});

t.test('..data must name a timestamped directory inside the volume', async (t) => {
  const dir = t.testdir({ outside: { f: 'x' } });
  const vol = path.join(dir, 'vol');
  const ts = atomicWrite(vol, { a: 'A' });
  const relink = (target: string) => {
    fs.rmSync(path.join(vol, '..data'));
    fs.symlinkSync(target, path.join(vol, '..data'));
  };
  for (const target of [path.join(dir, 'outside'), '../outside', '..', '.', 'a', '..data', '..x/..']) {
    relink(target);
    t.throws(() => walk(vol), { message: 'volume "v": ..data does not point to a timestamped directory inside the volume' }, target);
  }
  fs.symlinkSync(path.join(dir, 'outside'), path.join(vol, '..2026_01_01_00_00_00.1'));
  relink('..2026_01_01_00_00_00.1');
  t.throws(() => walk(vol), { message: 'volume "v": ..data points to "..2026_01_01_00_00_00.1": a path element is a symbolic link' });
  relink('..2026_01_01_00_00_00.2');
  t.throws(() => walk(vol), { message: 'volume "v": ..data points to "..2026_01_01_00_00_00.2": not found' });
  fs.rmSync(path.join(vol, '..data'));
  fs.mkdirSync(path.join(vol, '..data'));
  t.throws(() => walk(vol), { message: 'volume "v": ..data is not a symbolic link' });
  t.equal(uidOf(path.join(dir, 'outside/f')), 0);
  t.equal(uidOf(path.join(ts, 'a')), 0);
  t.ok(isTimestampedName('..2026_11_22_03_20_00.123456789'));
});

t.test('a plain directory (no ..data) is walked itself; ..-names skipped', async (t) => {
  const dir = t.testdir({ plain: { a: 'A', sub: { b: 'B' }, '..2026_01_01_00_00_00.1': { stale: 'S' } } });
  const r = walk(path.join(dir, 'plain'));
  t.same([r.files, r.timestamped], [['a', 'sub/b'], undefined]);
  t.equal(uidOf(path.join(dir, 'plain/..2026_01_01_00_00_00.1/stale')), 0);
});

t.test('another file system inside the volume is not entered', { skip: process.getuid?.() !== 0 && 'needs root' }, async (t) => {
  // Not a t.testdir: its cleanup would run before an unmount in t.teardown.
  const tmp = fs.mkdtempSync('/tmp/envhook-walk-');
  const vol = path.join(tmp, 'vol');
  const ts = atomicWrite(vol, { 'm/x': 'x' });
  execFileSync('mount', ['-t', 'tmpfs', 'tmpfs', path.join(ts, 'm')]);
  t.teardown(() => {
    execFileSync('umount', [path.join(ts, 'm')]);
    fs.rmSync(tmp, { recursive: true });
  });
  fs.writeFileSync(path.join(ts, 'm/y'), 'y');
  t.throws(() => walk(vol), { message: 'volume "v": directory "m" is a mount point (another file system inside the volume)' });
  t.equal(uidOf(path.join(ts, 'm/y')), 0);
});

t.test('the walk leaves the working directory as it was, on success and on failure', async (t) => {
  const home = process.cwd();
  const vol = path.join(t.testdir({}), 'vol');
  const ts = atomicWrite(vol, { a: 'A', 'sub/b': 'B', 'sub/deep/c': 'C' });
  t.equal(walk(vol).changed, 3);
  t.equal(process.cwd(), home);
  fs.linkSync(path.join(ts, 'sub/b'), path.join(ts, 'sub/b2'));
  t.throws(() => walk(vol, { defaultOwner: owner(1002) }), /hard links/);
  t.equal(process.cwd(), home);
});

t.test('without a working directory (removed) the walk still works', async (t) => {
  const home = process.cwd();
  const gone = t.testdir({ gone: {} });
  const vol = path.join(gone, 'vol');
  const ts = atomicWrite(vol, { a: 'A', 'sub/b': 'B' });
  process.chdir(path.join(gone, 'gone'));
  fs.rmdirSync(path.join(gone, 'gone'));
  try {
    t.equal(walk(vol).changed, 2);
    t.equal(uidOf(path.join(ts, 'sub/b')), 1000);
  } finally {
    process.chdir(home);
  }
});

t.test('a deadline passed: one line naming the volume and how far it got, not a walk past the runtime timeout', async (t) => {
  const vol = path.join(t.testdir({}), 'vol');
  const files = Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`f${i}`, 'x']));
  const ts = atomicWrite(vol, files);
  t.throws(
    () =>
      walk(vol, {
        deadline: process.hrtime.bigint() - 1n,
      }),
    {
      message:
        /^volume "v": owners not all set in time \(\d+ files done\): given up before the runtime's request timeout; a retry goes on from there$/,
    },
  );
  const left = fs.readdirSync(ts).filter((f) => uidOf(path.join(ts, f)) === 0).length;
  t.ok(left > 0 && left < 200, `stopped part way (${left} of 200 left)`);
  t.same(walk(vol, { deadline: process.hrtime.bigint() + 60_000_000_000n }).changed, left, 'a retry in time does the rest');
});
