// Owners checked before any chown: every volume or none is left open; mapping and item errors.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { prepareOwners, releaseOwners } from '../../src/ownership/prepare.ts';
import { normalize } from '../../src/ownership/annotation.ts';
import { createVolumeLocator } from '../../src/k8s/volumes.ts';
import { EnvhookError } from '../../src/errors.ts';
import { makePod } from '../../scripts/kubelet-pod.ts';

const openFds = () => fs.readdirSync('/proc/self/fd').length;

t.test('prepared: translation, owners, open data directories; released', async (t) => {
  const pod = makePod(path.join(t.testdir({}), 'kubelet'), {
    atomic: [
      { plugin: 'secret', name: 'a', payload: { k: 'K', 'd/f': 'F' } },
      { plugin: 'configmap', name: 'b', payload: { c: 'C' } },
    ],
  });
  const volumes = createVolumeLocator({ pod: { dir: pod.dir, uid: pod.uid, from: 'mounts' }, overrides: new Map() });
  const before = openFds();
  const p = prepareOwners(
    normalize([
      { volume: 'a', defaultUser: 5, items: [{ path: 'd/f', user: 6 }] },
      { volume: 'b', items: [] },
    ]),
    volumes,
    { mounts: [], uidMappings: [{ containerID: 0, hostID: 1000, size: 100 }] },
  );
  t.same(
    p.map((v) => [v.volume, v.translation.kind, v.defaultOwner, [...v.items]]),
    [
      ['a', 'userns', { uid: 5, hostUid: 1005 }, [['d/f', { uid: 6, hostUid: 1006 }]]],
      ['b', 'userns', undefined, []],
    ],
  );
  t.equal(openFds(), before + 2, 'one open data directory a volume');
  releaseOwners(p);
  t.equal(openFds(), before);
});

t.test('a failure in a later volume closes the earlier ones', async (t) => {
  const pod = makePod(path.join(t.testdir({}), 'kubelet'), { atomic: [{ plugin: 'secret', name: 'a', payload: { k: 'K' } }] });
  const volumes = createVolumeLocator({ pod: { dir: pod.dir, uid: pod.uid, from: 'mounts' }, overrides: new Map() });
  const before = openFds();
  t.throws(
    () =>
      prepareOwners(
        normalize([
          { volume: 'a', defaultUser: 5 },
          { volume: 'a2', defaultUser: 5 },
        ]),
        volumes,
        { mounts: [], uidMappings: undefined },
      ),
    new EnvhookError('volume "a2" not found'),
  );
  t.throws(
    () =>
      prepareOwners(normalize([{ volume: 'a', items: [{ path: 'missing', user: 1 }] }]), volumes, { mounts: [], uidMappings: undefined }),
    new EnvhookError('volume "a": item path "missing" is not in the volume'),
  );
  const dir = path.join(pod.dir, 'volumes/kubernetes.io~secret/a');
  const mixed = {
    mounts: [
      { source: dir, options: ['idmap'] },
      { source: dir, options: [] },
    ],
    uidMappings: undefined,
  };
  t.throws(() => prepareOwners(normalize([{ volume: 'a', defaultUser: 1 }]), volumes, mixed), {
    message: /^volume "a" is mounted both idmapped and not idmapped/,
  });
  t.equal(openFds(), before, 'nothing left open');
});
