// Facts from an NRI request: NRI's own container name and pod UID (trusted), the pod's
// annotations, and the request's env, mounts and uid mappings; nothing read from disk.
import t from 'tap';
import { factsFromNri } from '../../src/facts/nri-facts.ts';
import type { NriCreateRequest } from '../../src/facts/nri-facts.ts';

const request = (extra: Partial<NriCreateRequest['container']> = {}): NriCreateRequest => ({
  pod: {
    id: 'sb',
    name: 'web',
    namespace: 'ns',
    uid: 'pod-uid',
    annotations: { 'envhook.io/env': '{}', 'io.kubernetes.cri.container-name': 'forged' },
  },
  container: {
    id: 'c1',
    name: 'app',
    annotations: { 'io.kubernetes.cri.sandbox-uid': 'forged' },
    env: ['A=1'],
    mounts: [{ destination: '/k', source: '/s', type: 'bind', options: ['idmap'] }],
    ...extra,
  },
});

t.test('identity and pod from NRI fields, annotations from the pod', async (t) => {
  const r = request();
  const f = factsFromNri(r);
  t.equal(f.container, 'app');
  t.same(f.pod, { from: 'uid', uid: 'pod-uid' });
  t.equal(f.annotations, r.pod.annotations);
  t.same(f.env, ['A=1']);
  t.same(f.mounts, r.container.mounts);
  t.equal(f.uidMappings, undefined);
  t.equal(f.volumes.size, 0, 'no admin overrides in NRI mode');
  t.equal(f.sandbox, false);
});

t.test('uid mappings in the pipeline shape; sandbox from the container annotations', async (t) => {
  t.same(factsFromNri(request({ uidMappings: [{ containerId: 0, hostId: 100000, size: 65536 }] })).uidMappings, [
    { containerID: 0, hostID: 100000, size: 65536 },
  ]);
  t.equal(factsFromNri(request({ uidMappings: [] })).uidMappings, undefined);
  t.ok(factsFromNri(request({ annotations: { 'io.kubernetes.cri.container-type': 'sandbox' } })).sandbox);
});
