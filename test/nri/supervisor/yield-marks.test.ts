// The mark of a DaemonSet pod that handed over: its UID from ENVHOOK_POD_UID, kept in the run
// directory while the kubelet has the pod, dropped at a start once its directory is gone.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { silentLogger } from '../../../src/log.ts';
import { podUidFrom, yieldMarks } from '../../../src/nri/supervisor/yield-marks.ts';

t.test('ENVHOOK_POD_UID: unset, a pod UID, anything else refused in one line', async (t) => {
  t.equal(podUidFrom({}), undefined);
  t.equal(podUidFrom({ ENVHOOK_POD_UID: '' }), undefined);
  t.equal(podUidFrom({ ENVHOOK_POD_UID: '0b2e5c1a-7f3e-4c2d-9a1b-2c3d4e5f6a7b' }), '0b2e5c1a-7f3e-4c2d-9a1b-2c3d4e5f6a7b');
  t.throws(() => podUidFrom({ ENVHOOK_POD_UID: '../etc' }), {
    message: 'ENVHOOK_POD_UID is not a pod UID: set it from the downward API (fieldRef metadata.uid), or leave it unset',
  });
});

t.test('set, has, clear; a new start drops the marks of pods the kubelet no longer has', async (t) => {
  const dir = t.testdir({ kubelet: { pods: { 'pod-a': {}, 'pod-b': {} } }, run: {} });
  const [runDir, kubeletRoot] = [path.join(dir, 'run'), path.join(dir, 'kubelet')];
  const marks = yieldMarks(runDir, kubeletRoot, silentLogger);
  t.notOk(marks.has('pod-a'));
  marks.set('pod-a');
  marks.set('pod-b');
  t.ok(marks.has('pod-a'));
  marks.clear('pod-b');
  t.notOk(marks.has('pod-b'));
  marks.set('pod-b');
  fs.rmSync(path.join(kubeletRoot, 'pods', 'pod-b'), { recursive: true });
  const again = yieldMarks(runDir, kubeletRoot, silentLogger);
  t.ok(again.has('pod-a'), 'its pod is still there: kept');
  t.notOk(again.has('pod-b'), 'its pod is gone: dropped');
});
