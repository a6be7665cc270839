import t from 'tap';
import path from 'node:path';
import { discoverPodDir, podUidsFromMounts } from '../../src/k8s/pod.ts';
import { findVolume, parseVolumeFlags } from '../../src/k8s/volumes.ts';
import type { Spec } from '../../src/oci/spec.ts';

const UID = '0b5e1c7a-1111-2222-3333-444455556666';
const specWith = (root: string, uid = UID): Spec => ({
  mounts: [
    { destination: '/etc/hosts', source: `${root}/pods/${uid}/etc-hosts`, type: 'bind' },
    { destination: '/dev/termination-log', source: `${root}/pods/${uid}/containers/app/abc`, type: 'bind' },
    { destination: '/proc', source: 'proc', type: 'proc' },
  ],
});

t.test('pod directory from kubelet-made mounts, cross-checked with the pod UID annotation', async (t) => {
  const root = t.testdir({
    pods: { [UID]: { volumes: { 'kubernetes.io~empty-dir': { config: {} }, 'kubernetes.io~secret': { keys: {} } } } },
  });
  t.same([...podUidsFromMounts(specWith(root), root)], [UID]);
  const pod = discoverPodDir(specWith(root), { 'io.kubernetes.pod.uid': UID }, root);
  t.same(pod, { dir: path.join(root, 'pods', UID), uid: UID, from: 'mounts' });
  t.throws(() => discoverPodDir(specWith(root), { 'io.kubernetes.cri.sandbox-uid': 'other' }, root), {
    message: `pod UID annotation "other" disagrees with the kubelet mounts (pod "${UID}")`,
  });
  t.equal(discoverPodDir({ mounts: [] }, {}, root), undefined, 'a plain bundle has no pod');
  const two: Spec = { mounts: [...(specWith(root).mounts as []), { destination: '/x', source: `${root}/pods/other/volumes/x` }] };
  t.throws(() => discoverPodDir(two, {}, root), { message: /more than one pod/ });
  t.same([...podUidsFromMounts(specWith('/elsewhere'), root)], [], 'mounts outside the kubelet root do not count');
  t.same([...podUidsFromMounts({ mounts: [{ destination: '/x', source: `${root}/pods/${UID}/../../etc` }] }, root)], []);

  const found = { pod, overrides: new Map<string, string>() };
  t.equal(findVolume(found, 'config', 'emptyDir'), path.join(root, 'pods', UID, 'volumes/kubernetes.io~empty-dir/config'));
  t.throws(() => findVolume(found, 'keys', 'emptyDir'), { message: 'volume "keys" is not an emptyDir' });
  t.throws(() => findVolume(found, 'config', 'atomic'), {
    message: 'volume "config" is not a configMap, secret, projected or downwardAPI volume',
  });
  t.throws(() => findVolume(found, 'nope', 'emptyDir'), { message: 'volume "nope" not found' });
  t.throws(() => findVolume(found, '../x', 'emptyDir'), { message: 'volume name "../x" is not a valid volume name' });
  t.throws(() => findVolume({ pod: undefined, overrides: new Map() }, 'config', 'emptyDir'), {
    message: /^volume "config" not found: no pod directory/,
  });
  t.equal(findVolume({ pod: undefined, overrides: parseVolumeFlags(['config=/tmp/x']) }, 'config', 'emptyDir'), '/tmp/x');
  t.throws(() => parseVolumeFlags(['config']), { message: '--volume "config": expected NAME=DIR' });
});
