// Passes over a volume: the published directory, and a pending one the kubelet just made.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { isKubeletTimestamped, openPending, ownCurrent, ownPending, ownPendingEntry, type PassTarget } from '../../src/watch/pass.ts';
import { atomicWrite, atomicWriteSteps, timestampedName } from '../../scripts/kubelet-pod.ts';

function target(dir: string): PassTarget {
  return { volume: 'keys', dir, defaultOwner: { uid: 1000, hostUid: 1000 }, items: new Map([['b', { uid: 7, hostUid: 7 }]]) };
}

t.test('names: only what the kubelet writer makes', async (t) => {
  t.ok(isKubeletTimestamped(timestampedName()));
  t.ok(isKubeletTimestamped('..2026_11_22_03_20_00.123456789'));
  for (const bad of [
    '..data',
    '..data_tmp',
    '..evil',
    '..2026_11_22_03_20_00.',
    '..2026_11_22_03_20.1',
    '.2026_11_22_03_20_00.1',
    '..2026_11_22_03_20_00.1/x',
  ])
    t.notOk(isKubeletTimestamped(bad), bad);
});

t.test('ownCurrent: the files ..data points at, as at start', async (t) => {
  const vol = path.join(t.testdir({}), 'vol');
  const ts = atomicWrite(vol, { a: 'A', b: 'B' });
  t.same(ownCurrent(target(vol)), { files: 2, changed: 2, timestamped: path.basename(ts) });
  t.same([fs.lstatSync(path.join(ts, 'a')).uid, fs.lstatSync(path.join(ts, 'b')).uid], [1000, 7]);
  t.same(ownCurrent(target(vol)), { files: 2, changed: 0, timestamped: path.basename(ts) }, 'idempotent');
  fs.symlinkSync('/etc', path.join(vol, '..data_tmp'));
  fs.renameSync(path.join(vol, '..data_tmp'), path.join(vol, '..data'));
  t.throws(() => ownCurrent(target(vol)), { message: 'volume "keys": ..data does not point to a timestamped directory inside the volume' });
});

t.test('ownPending: the new directory before the swap; nothing else', async (t) => {
  const vol = path.join(t.testdir({}), 'vol');
  const old = atomicWrite(vol, { a: 'A' });
  const steps = atomicWriteSteps(vol, { a: 'A2', 'n/b': 'B' });
  const { tsDir } = steps.next().value as { tsDir: string };
  t.same(ownPending(target(vol), path.basename(tsDir)), { files: 2, changed: 2 });
  t.equal(fs.lstatSync(path.join(tsDir, 'n/b')).uid, 1000, "nested: 'b' as an item is the top-level path only");
  t.equal(fs.lstatSync(path.join(old, 'a')).uid, 0, 'the published directory is not this pass');
  t.equal(ownPending(target(vol), '..evil'), undefined);
  t.equal(ownPending(target(vol), '..2026_11_22_03_20_00.1'), undefined, 'gone');
  const fake = '..2026_11_22_03_20_00.2';
  fs.symlinkSync(path.basename(tsDir), path.join(vol, fake));
  t.equal(ownPending(target(vol), fake), undefined, 'a symlink is not a directory of the volume');
});

t.test('ownPendingEntry: one entry as its event names it, through the held directory, confined', async (t) => {
  const dir = t.testdir({ outside: { secret: 'S' } });
  const vol = path.join(dir, 'vol');
  atomicWrite(vol, { a: 'A' });
  const steps = atomicWriteSteps(vol, { b: 'B', 'n/deep/c': 'C' });
  const { tsDir } = steps.next().value as { tsDir: string };
  const tgt = target(vol);
  const p = openPending(tgt, path.basename(tsDir))!;
  t.teardown(() => fs.closeSync(p.fd));
  const stats = { files: 0, changed: 0 };
  t.equal(ownPendingEntry(tgt, p, 'b', stats), 'file');
  t.equal(fs.lstatSync(path.join(tsDir, 'b')).uid, 7, "item 'b'");
  t.same(stats, { files: 1, changed: 1 }, 'counted, and counted changed');
  t.equal(ownPendingEntry(tgt, p, 'b', stats), 'file');
  t.same(stats, { files: 2, changed: 1 }, 'owned already: not changed again');
  t.equal(ownPendingEntry(tgt, p, 'n'), 'directory', "a directory is the caller's to walk");
  t.equal(ownPendingEntry(tgt, p, 'n/deep/c'), 'file');
  t.equal(fs.lstatSync(path.join(tsDir, 'n/deep/c')).uid, 1000, 'nested: the default owner');
  t.equal(ownPendingEntry(tgt, p, 'gone'), undefined, 'gone');
  fs.symlinkSync(path.join(dir, 'outside/secret'), path.join(tsDir, 'link'));
  t.equal(ownPendingEntry(tgt, p, 'link'), undefined, 'a symlink is not followed');
  fs.symlinkSync(path.join(dir, 'outside'), path.join(tsDir, 'out'));
  t.equal(ownPendingEntry(tgt, p, 'out/secret'), undefined, 'nor a symlinked parent');
  fs.linkSync(path.join(dir, 'outside/secret'), path.join(tsDir, 'hard'));
  t.throws(() => ownPendingEntry(tgt, p, 'hard'), { message: 'volume "keys": file "hard" has 2 hard links; refusing to chown it' });
  t.equal(fs.lstatSync(path.join(dir, 'outside/secret')).uid, 0, 'nothing outside the volume changed owner');
  // The name swapped after the open: the held descriptor still names the kubelet's directory.
  fs.renameSync(tsDir, path.join(vol, '..moved'));
  fs.mkdirSync(tsDir);
  fs.writeFileSync(path.join(tsDir, 'b2'), 'X');
  t.equal(ownPendingEntry(tgt, p, 'b2'), undefined, 'a directory put in its place is not reached');
  t.equal(fs.lstatSync(path.join(tsDir, 'b2')).uid, 0);
});
