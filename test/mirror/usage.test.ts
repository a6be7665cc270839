// What the copies under a run directory hold: per copy its current payload, per pod, the node;
// a payload swapped in is measured anew, one gone is dropped.
import t from 'tap';
import path from 'node:path';
import { atomicWrite } from '../../scripts/kubelet-pod.ts';
import { copyVolume } from '../../src/mirror/copy.ts';
import { removeCopy } from '../../src/mirror/remove.ts';
import { measureCopies, podUsage } from '../../src/mirror/usage.ts';

t.test('bytes and files of every copy, by pod and volume; a rewrite counted at its new size', async (t) => {
  const dir = t.testdir({});
  const runDir = path.join(dir, 'run');
  const owners = { defaultOwner: { hostUid: 1000 }, items: new Map() };
  t.same(measureCopies(runDir), { bytes: 0, files: 0, copies: 0, pods: new Map() }, 'no run directory: nothing');
  const kubelet = (name: string, files: Record<string, string>) => {
    const k = path.join(dir, 'kubelet', name);
    atomicWrite(k, files);
    return k;
  };
  copyVolume({ runDir, podUid: 'p1', volume: 'a' }, kubelet('a', { x: '12345', 'd/y': '123' }), owners);
  copyVolume({ runDir, podUid: 'p1', volume: 'b' }, kubelet('b', { x: '1' }), owners);
  copyVolume({ runDir, podUid: 'p2', volume: 'a' }, kubelet('a2', { x: '1234567890' }), owners);
  const u = measureCopies(runDir);
  t.same([u.bytes, u.files, u.copies], [19, 4, 3]);
  t.same(podUsage(u, 'p1', new Set()), { bytes: 9, files: 3, volumes: 2 });
  t.same(podUsage(u, 'p1', new Set(['a'])), { bytes: 1, files: 1, volumes: 1 }, 'without the volumes a start copies again');
  copyVolume({ runDir, podUid: 'p1', volume: 'b' }, kubelet('b', { x: '1', z: '22' }), owners);
  t.same(measureCopies(runDir).pods.get('p1')?.get('b'), { bytes: 3, files: 2 }, 'the new payload measured');
  removeCopy({ runDir, podUid: 'p2', volume: 'a' });
  t.same([measureCopies(runDir).bytes, measureCopies(runDir).copies], [11, 2], 'a copy removed is gone from the sums');
});
