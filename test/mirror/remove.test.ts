import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { atomicWrite } from '../../scripts/kubelet-pod.ts';
import { copyVolume } from '../../src/mirror/copy.ts';
import { podsWithCopies, removeCopy, removeCopySteps, removePodCopies, removeTree } from '../../src/mirror/remove.ts';

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

t.test("a refused start's removal only while the copy holds its payload", async (t) => {
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
  t.equal(removeCopy(place, theirs.timestamped), true, 'its own payload: removed');
});

t.test('removeTree: a step per entry removed; a link unlinked, never followed; nothing there, no step', async (t) => {
  const dir = t.testdir({ keep: { secret: 'kept' }, tree: { a: '1', b: '2', d: { c: '3', e: {} } } });
  fs.symlinkSync(path.join(dir, 'keep'), path.join(dir, 'tree', 'link'));
  const steps = removeTree(path.join(dir, 'tree'));
  let n = 0;
  while (!steps.next().done) n++;
  // a, b, link, d/c, d/e, d, tree: one step each.
  t.equal(n, 7, 'one step per entry removed');
  t.notOk(fs.existsSync(path.join(dir, 'tree')));
  t.equal(fs.readFileSync(path.join(dir, 'keep', 'secret'), 'utf8'), 'kept', "the link's target is left alone");
  const none = removeTree(path.join(dir, 'tree'));
  t.same(none.next(), { done: true, value: undefined }, 'nothing there: no step');
  // removeCopySteps: the same removal, one volume's copy.
  const kubelet = path.join(dir, 'kubelet');
  atomicWrite(kubelet, { a: 'A', b: 'B' });
  const place = { runDir: path.join(dir, 'run'), podUid: 'p1', volume: 'a' };
  copyVolume(place, kubelet, { defaultOwner: undefined, items: new Map() });
  const copySteps = removeCopySteps(place);
  let stepped = 0;
  let done = copySteps.next();
  for (; !done.done; done = copySteps.next()) stepped++;
  t.equal(done.value, true);
  // a, b, ..data, the payload's a and b, the payload, the copy's directory.
  t.equal(stepped, 7, 'a step per entry of the copy');
});
