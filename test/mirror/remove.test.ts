import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { atomicWrite } from '../../scripts/kubelet-pod.ts';
import { copyVolume } from '../../src/mirror/copy.ts';
import { podsWithCopies, removeCopy, removePodCopies } from '../../src/mirror/remove.ts';

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
