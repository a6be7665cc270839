// A running pod's owner volumes, found without a container start (src/watch/pod-volumes.ts):
// the kubelet's layout on disk, the annotation checked as at the start, each UID mapping from
// the mounts, and what cannot be watched skipped with its reason.
import t from 'tap';
import path from 'node:path';
import { SchemaError } from '../../src/errors.ts';
import { podWatchVolumes } from '../../src/watch/pod-volumes.ts';
import { makeAtomicVolume, makePod } from '../../scripts/kubelet-pod.ts';

const NO_MOUNTS = { mounts: [], uidMappings: undefined };

t.test('configMap, secret and projected volumes under the pod directory, with their owners', async (t) => {
  const pod = makePod(path.join(t.testdir(), 'kubelet'), { emptyDirs: { scratch: { f: 'x' } } });
  const keys = makeAtomicVolume(pod, 'secret', 'keys', { key: 'k' });
  const conf = makeAtomicVolume(pod, 'configmap', 'conf', { a: 'a' });
  const owners = [
    { volume: 'keys', defaultUser: 1000 },
    { volume: 'conf', items: [{ path: 'a', user: 7 }] },
  ];
  const r = podWatchVolumes(pod.dir, { 'envhook.io/volumeOwners': JSON.stringify(owners) }, NO_MOUNTS);
  t.same(r.skipped, []);
  t.same(
    r.volumes.map((v) => [v.dir, v.owners.volume, v.owners.defaultUser, v.owners.items.map((i) => [i.key, i.user]), v.uidMapping]),
    [
      [keys, 'keys', 1000, [], { kind: 'none' }],
      [conf, 'conf', undefined, [['a', 7]], { kind: 'none' }],
    ],
  );
});

t.test("no annotation: nothing; a bad one: the start's SchemaError", async (t) => {
  const pod = makePod(path.join(t.testdir(), 'kubelet'));
  t.same(podWatchVolumes(pod.dir, {}, NO_MOUNTS), { volumes: [], skipped: [] });
  t.throws(() => podWatchVolumes(pod.dir, { 'envhook.io/volumeOwners': '[{"volume":"keys","defaultUser":-1}]' }, NO_MOUNTS), SchemaError);
});

t.test('skipped with a reason: a missing volume, an emptyDir, mixed idmapped mounts; an idmapped one is kept', async (t) => {
  const pod = makePod(path.join(t.testdir(), 'kubelet'), { emptyDirs: { scratch: { f: 'x' } } });
  const keys = makeAtomicVolume(pod, 'secret', 'keys', { key: 'k' });
  const annotations = {
    'envhook.io/volumeOwners': JSON.stringify(['absent', 'scratch', 'keys'].map((volume) => ({ volume, defaultUser: 1000 }))),
  };
  const mount = (options: string[]) => ({ destination: '/keys', source: keys, type: 'bind', options });
  const mixed = podWatchVolumes(pod.dir, annotations, { mounts: [mount(['rbind', 'idmap']), mount(['rbind'])], uidMappings: undefined });
  t.same(mixed.skipped, [
    { volume: 'absent', reason: 'volume "absent" not found' },
    { volume: 'scratch', reason: 'volume "scratch" is not a configMap, secret, projected or downwardAPI volume' },
    { volume: 'keys', reason: 'volume "keys" is mounted both idmapped and not idmapped' },
  ]);
  t.same(mixed.volumes, []);
  const idmapped = podWatchVolumes(pod.dir, annotations, { mounts: [mount(['rbind', 'idmap'])], uidMappings: undefined });
  t.same(
    idmapped.volumes.map((v) => [v.owners.volume, v.uidMapping]),
    [['keys', { kind: 'idmapped' }]],
  );
});

t.test(
  'a volume some container reads through its owned copy is watched to be copied; one mounted from the kubelet too, also in place',
  async (t) => {
    const pod = makePod(path.join(t.testdir(), 'kubelet'));
    const keys = makeAtomicVolume(pod, 'secret', 'keys', { key: 'k' });
    const conf = makeAtomicVolume(pod, 'configmap', 'conf', { a: 'a' });
    const annotations = {
      'envhook.io/volumeOwners': JSON.stringify([
        { volume: 'keys', defaultUser: 1000 },
        { volume: 'conf', defaultUser: 7 },
      ]),
    };
    const copies = { runDir: '/run/envhook', podUid: pod.uid };
    const mounts = {
      mounts: [
        { destination: '/keys', source: `/run/envhook/volumes/${pod.uid}/keys`, options: ['ro'] },
        { destination: '/conf', source: `/run/envhook/volumes/${pod.uid}/conf`, options: ['ro'] },
        { destination: '/old-conf', source: conf, options: ['ro'] },
      ],
      uidMappings: undefined,
    };
    const r = podWatchVolumes(pod.dir, annotations, mounts, copies);
    t.same(
      r.volumes.map((v) => [v.dir, v.owners.volume, v.copy]),
      [
        [keys, 'keys', { runDir: '/run/envhook', podUid: pod.uid, volume: 'keys' }],
        [conf, 'conf', { runDir: '/run/envhook', podUid: pod.uid, volume: 'conf' }],
        [conf, 'conf', undefined],
      ],
    );
    const other = podWatchVolumes(pod.dir, annotations, mounts, { runDir: '/elsewhere', podUid: pod.uid });
    t.same(
      other.volumes.map((v) => [v.owners.volume, v.dir, v.copy]),
      [['conf', conf, undefined]],
      "copies of another run directory are not known: only the kubelet's volume a container mounts is watched (in place); keys, mounted from nothing of this node's, is left alone",
    );
  },
);
