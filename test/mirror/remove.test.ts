import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { atomicWrite } from '../../scripts/kubelet-pod.ts';
import { copyVolume } from '../../src/mirror/copy.ts';
import { cleanUpCopies, podsWithCopies, removeCopy, removePodCopies } from '../../src/mirror/remove.ts';

t.test("a pod's copies, one volume's copy, and the pods that have copies", async (t) => {
  const dir = t.testdir({});
  const runDir = path.join(dir, 'run');
  const kubelet = path.join(dir, 'kubelet');
  atomicWrite(kubelet, { a: 'A' });
  const owners = { defaultOwner: { hostUid: 1000 }, items: new Map() };
  t.same(podsWithCopies(runDir), [], 'no run directory: none');
  for (const [podUid, volume] of [
    ['p1', 'a'],
    ['p1', 'b'],
    ['p2', 'a'],
  ] as const)
    copyVolume({ runDir, podUid, volume }, kubelet, owners);
  t.same(podsWithCopies(runDir).sort(), ['p1', 'p2']);
  t.equal(removeCopy({ runDir, podUid: 'p1', volume: 'a' }), true);
  t.equal(removeCopy({ runDir, podUid: 'p1', volume: 'a' }), false, 'gone already');
  t.same(fs.readdirSync(path.join(runDir, 'volumes', 'p1')), ['b']);
  t.equal(removeCopy({ runDir, podUid: 'p2', volume: 'a' }), true);
  t.same(podsWithCopies(runDir), ['p1'], "the pod's directory of copies goes with its last copy");
  copyVolume({ runDir, podUid: 'p2', volume: 'a' }, kubelet, owners);
  t.equal(removePodCopies(runDir, 'p1'), true);
  t.equal(removePodCopies(runDir, 'p1'), false, 'gone already');
  t.same(podsWithCopies(runDir), ['p2']);
  fs.symlinkSync(kubelet, path.join(runDir, 'volumes', 'p3'));
  t.equal(removePodCopies(runDir, 'p3'), false, 'a symlink is not a pod of copies');
  t.ok(fs.existsSync(path.join(kubelet, 'a')), 'and its target is left alone');
});

t.test("a refused start's removal only while the copy holds its payload; a stopped thread's half-written payload cleaned up", async (t) => {
  const dir = t.testdir({});
  const runDir = path.join(dir, 'run');
  const kubelet = path.join(dir, 'kubelet');
  atomicWrite(kubelet, { a: 'A' });
  const owners = { defaultOwner: { hostUid: 1000 }, items: new Map() };
  const place = { runDir, podUid: 'p1', volume: 'a' };
  const mine = copyVolume(place, kubelet, owners);
  const theirs = copyVolume(place, kubelet, owners); // another container's start wrote it since
  t.equal(removeCopy(place, mine.timestamped), false, 'not the payload the refused start wrote: kept');
  t.ok(fs.existsSync(theirs.dir));
  // A payload being written when the thread was stopped, and a link of a swap under way.
  fs.mkdirSync(path.join(theirs.dir, '..2026_01_01_00_00_00.7'));
  fs.symlinkSync('..2026_01_01_00_00_00.7', path.join(theirs.dir, '..data_tmp.9'));
  cleanUpCopies([place, { runDir, podUid: 'p1', volume: 'gone' }]);
  t.same(
    fs
      .readdirSync(theirs.dir)
      .filter((n) => n.startsWith('..'))
      .sort(),
    ['..data', theirs.timestamped].sort(),
    'only the payload ..data points at is left',
  );
  // A copy whose first payload was never swapped in: no ..data, removed whole.
  const half = { runDir, podUid: 'p1', volume: 'b' };
  fs.mkdirSync(path.join(runDir, 'volumes', 'p1', 'b', '..2026_01_01_00_00_00.8'), { recursive: true });
  cleanUpCopies([half]);
  t.notOk(fs.existsSync(path.join(runDir, 'volumes', 'p1', 'b')));
  t.equal(removeCopy(place, theirs.timestamped), true, 'its own payload: removed');
});
