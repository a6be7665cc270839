// A kubelet volume into an owned copy and its updates, on real files with real chown: the copy's
// layout, owners before the swap (a watch on the copy's `..data` sees every file already owned),
// all or nothing, the kubelet's files untouched.
import t, { type Test } from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { atomicWrite } from '../../scripts/kubelet-pod.ts';
import { copyVolume, runCopyJob } from '../../src/mirror/copy.ts';
import { copyDir } from '../../src/mirror/layout.ts';
import { waitFor } from '../helpers/wait.ts';
import { startOf, tinyTmpfs } from '../helpers/mirror/start.ts';

const owners = { defaultOwner: { hostUid: 1000 }, items: new Map([['tls/key', { hostUid: 1001 }]]) };

function setup(t: Test) {
  const dir = t.testdir({});
  const place = { runDir: path.join(dir, 'run'), podUid: 'pod-1', volume: 'keys' };
  return { kubelet: path.join(dir, 'kubelet'), place, copy: copyDir(place) };
}

t.test("the atomic writer's layout, each file owned with the kubelet's mode; root's alone above it", async (t) => {
  const { kubelet, place, copy } = setup(t);
  const src = atomicWrite(kubelet, { key: { data: 'K', mode: 0o400 }, 'tls/key': { data: 'T', mode: 0o440 }, ca: 'C' });
  const r = copyVolume(place, kubelet, owners);
  t.match(r, { dir: copy, source: path.basename(src), files: 3, bytes: 3 });
  t.equal(fs.readlinkSync(path.join(copy, '..data')), r.timestamped);
  t.same(fs.readdirSync(copy).sort(), ['..data', r.timestamped, 'ca', 'key', 'tls'].sort());
  for (const name of ['ca', 'key', 'tls']) t.equal(fs.readlinkSync(path.join(copy, name)), `..data/${name}`);
  const st = (rel: string) => fs.statSync(path.join(copy, rel));
  t.same([st('key').uid, st('key').mode & 0o7777, fs.readFileSync(path.join(copy, 'key'), 'utf8')], [1000, 0o400, 'K']);
  t.same([st('tls/key').uid, st('tls/key').mode & 0o7777], [1001, 0o440], 'an item path gets its own owner');
  t.same([st('tls').uid, st('tls').mode & 0o7777], [0, 0o755], 'directories as the kubelet made them');
  t.equal(st('.').mode & 0o7777, 0o755, "the copy's root: the container's mount");
  t.equal(fs.statSync(path.dirname(copy)).mode & 0o7777, 0o700, 'the pod above it: root only');
  t.equal(fs.statSync(path.dirname(path.dirname(copy))).mode & 0o7777, 0o700, 'the volumes directory: root only');
  t.equal(fs.statSync(path.join(kubelet, 'key')).uid, 0, "the kubelet's files are left as the kubelet wrote them");
});

t.test('an update: a new directory, every file owned before ..data points at it; keys added and removed; old one retired', async (t) => {
  const { kubelet, place, copy } = setup(t);
  atomicWrite(kubelet, { a: 'A', b: 'B' });
  const first = copyVolume(place, kubelet, owners);
  const seen: string[] = [];
  const w = fs.watch(copy, (_e, name) => {
    if (name !== '..data') return;
    // The moment the swap is seen, every file it shows is owned already.
    for (const f of fs.readdirSync(path.join(copy, '..data'))) seen.push(`${f}:${fs.statSync(path.join(copy, '..data', f)).uid}`);
  });
  atomicWrite(kubelet, { b: 'B2', c: 'C' });
  const second = copyVolume(place, kubelet, owners);
  await waitFor(() => seen.length > 0, 5000, 'the swap seen');
  w.close();
  t.not(second.timestamped, first.timestamped);
  t.same(
    fs.readdirSync(copy).sort(),
    ['..data', first.timestamped, second.timestamped, 'b', 'c'].sort(),
    'a removed key loses its link, a new one gets one',
  );
  await waitFor(() => !fs.existsSync(path.join(copy, first.timestamped)), 10_000, 'the old directory removed once retired');
  t.equal(fs.readFileSync(path.join(copy, 'b'), 'utf8'), 'B2');
  t.ok(seen.length > 0 && seen.every((s) => s.endsWith(':1000')), `every file owned when the swap was seen (${seen.join(' ')})`);
});

t.test('all or nothing: a hard link fails the copy and leaves the copy as it was, nothing half-written', async (t) => {
  const { kubelet, place, copy } = setup(t);
  atomicWrite(kubelet, { a: 'A' });
  const first = copyVolume(place, kubelet, owners);
  const files: Record<string, string> = {};
  for (let i = 0; i < 20; i++) files[`f${String(i).padStart(2, '0')}`] = 'x';
  const ts = atomicWrite(kubelet, { ...files, z: 'z' });
  fs.linkSync(path.join(ts, 'z'), path.join(ts, 'zz'));
  t.throws(() => copyVolume(place, kubelet, owners), { message: 'volume "keys": file "z" has 2 hard links; refusing to copy it' });
  t.same(fs.readdirSync(copy).sort(), ['..data', first.timestamped, 'a'].sort(), 'the copy is as it was');
  t.equal(fs.statSync(path.join(ts, 'f00')).uid, 0, "no kubelet file's owner changed");
});

t.test('a failed write (the run directory full) removes what it wrote', async (t) => {
  const { kubelet, place, copy } = setup(t);
  atomicWrite(kubelet, { a: 'A' });
  const first = copyVolume(place, kubelet, owners);
  const { execFileSync } = await import('node:child_process');
  const pod = path.dirname(copy);
  // A tiny tmpfs over the pod's copies, with the current copy moved into it.
  const keep = fs.mkdtempSync(path.join(path.dirname(pod), 'keep-'));
  fs.cpSync(copy, path.join(keep, 'keys'), { recursive: true, verbatimSymlinks: true });
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k,mode=0700', 'tmpfs', pod]);
  try {
    fs.cpSync(path.join(keep, 'keys'), copy, { recursive: true, verbatimSymlinks: true });
    fs.chmodSync(copy, 0o755);
    atomicWrite(kubelet, { a: 'x'.repeat(200_000) });
    t.throws(() => copyVolume(place, kubelet, owners), {
      message: 'volume "keys": cannot write its owned copy (ENOSPC): the run directory is full',
    });
    t.same(fs.readdirSync(copy).sort(), ['..data', first.timestamped, 'a'].sort(), 'the copy is as it was');
  } finally {
    execFileSync('umount', [pod]);
  }
});

t.test('refused: a copy directory that is not root-only above, or a symlink on the way', async (t) => {
  const { kubelet, place } = setup(t);
  atomicWrite(kubelet, { a: 'A' });
  fs.mkdirSync(path.join(place.runDir, 'volumes'), { recursive: true, mode: 0o755 });
  fs.chmodSync(path.join(place.runDir, 'volumes'), 0o755);
  t.throws(() => copyVolume(place, kubelet, owners), {
    message: `${path.join(place.runDir, 'volumes')} must be owned by root and closed to group and others`,
  });
  fs.chmodSync(path.join(place.runDir, 'volumes'), 0o700);
  fs.symlinkSync('/tmp', path.join(place.runDir, 'volumes', 'pod-1'));
  t.throws(() => copyVolume(place, kubelet, owners), {
    message: `owned copy ${copyDir(place)}: a path element is a symbolic link`,
  });
  t.throws(() => copyVolume({ ...place, volume: '../x' }, kubelet, owners), { message: 'volume "../x" cannot name an owned copy' });
});

t.test('a job past its deadline: one line naming the volume, the copy it was making removed, nothing else touched', async (t) => {
  const { kubelet, place, copy } = setup(t);
  const payload: Record<string, string> = {};
  for (let i = 0; i < 50; i++) payload[`k${i}`] = `CANARY-late-${i}`;
  atomicWrite(kubelet, payload);
  const late = { place, kubeletDir: kubelet, owners, deadline: process.hrtime.bigint() - 1n };
  t.throws(() => runCopyJob(late), {
    message:
      'volume "keys": its owned copy could not be made within the runtime\'s request timeout: give the volume fewer or smaller files, or fewer volumes owners in one container',
  });
  t.notOk(fs.existsSync(copy), 'the copy this job made is removed');
  const made = runCopyJob({ place, kubeletDir: kubelet, owners });
  t.ok(made.created, 'a job that makes the copy says so');
  t.equal(made.owned.length, 50, 'the files that got an owner');
  t.throws(() => runCopyJob(late), { message: /request timeout/ });
  t.equal(fs.readlinkSync(path.join(copy, '..data')), made.timestamped, 'a copy there before stays as it was');
  t.same(
    fs.readdirSync(copy).filter((n) => n.startsWith('..2')),
    [made.timestamped],
    'nothing half-written left',
  );
  t.notOk(runCopyJob({ place, kubeletDir: kubelet, owners }).created, 'a job on a copy there already did not make it');
});

t.test(
  'ENOSPC in the middle of a start (the run directory filled by another writer after the check): every copy it made removed, one line',
  async (t) => {
    const real = await import('../../src/mirror/budget.ts');
    // The check passed, and something else took the space before the writes: here, no check at all.
    const { runStartJob: unchecked } = await t.mockImport<typeof import('../../src/mirror/copy.ts')>('../../src/mirror/copy.ts', {
      '../../src/mirror/budget.ts': { ...real, checkBudgets: () => {} },
    });
    const dir = t.testdir({});
    const runDir = tinyTmpfs(t, '64k');
    const big = 'CANARY-enospc-' + 'x'.repeat(50_000);
    // Another container's copy of volume "c", there before the start: it keeps its payload.
    unchecked(startOf(t, dir, runDir, 'pod-1', { c: { k: 'C' } }));
    const before = fs.readlinkSync(path.join(runDir, 'volumes', 'pod-1', 'c', '..data'));
    const start = startOf(t, dir, runDir, 'pod-1', { a: { k: 'A'.repeat(8000) }, c: { k: 'C2' }, b: { k: big } });
    const err = t.throws(() => unchecked(start)) as Error;
    t.equal(err.message, 'volume "b": cannot write its owned copy (ENOSPC): the run directory is full');
    t.same(fs.readdirSync(path.join(runDir, 'volumes', 'pod-1')), ['c'], 'the copy of "a" this start made is removed, "b" left nothing');
    const c = path.join(runDir, 'volumes', 'pod-1', 'c');
    t.not(fs.readlinkSync(path.join(c, '..data')), before, '"c" was rewritten by the start (it was there before: not removed)');
    t.equal(fs.readFileSync(path.join(c, 'k'), 'utf8'), 'C2');
    t.notOk(
      fs.readdirSync(c).some((n) => n.startsWith('..') && n !== '..data' && n !== fs.readlinkSync(path.join(c, '..data')) && n !== before),
      'no partial payload left',
    );
  },
);
