// Volumes of the pod by name and kind, admin overrides, and --volume flags.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { createVolumeLocator, findVolume, parseVolumeFlags } from '../../src/k8s/volumes.ts';
import { EnvhookError } from '../../src/errors.ts';
import { makePod } from '../../scripts/kubelet-pod.ts';

t.test('emptyDir and atomic-writer volumes, by kind', async (t) => {
  const pod = makePod(path.join(t.testdir({}), 'kubelet'), {
    emptyDirs: { config: { a: 'A' } },
    atomic: [
      { plugin: 'projected', name: 'certs', payload: { c: 'C' } },
      { plugin: 'downward-api', name: 'info', payload: { l: 'L' } },
    ],
  });
  const volumes = createVolumeLocator({ pod: { dir: pod.dir, uid: pod.uid, from: 'uid' }, overrides: new Map() });
  t.equal(volumes.find('config', 'emptyDir'), pod.emptyDir('config'));
  t.equal(volumes.find('certs', 'atomic'), path.join(pod.dir, 'volumes/kubernetes.io~projected/certs'));
  t.equal(volumes.find('info', 'atomic'), path.join(pod.dir, 'volumes/kubernetes.io~downward-api/info'));
  t.throws(() => volumes.find('certs', 'emptyDir'), new EnvhookError('volume "certs" is not an emptyDir'));
  t.throws(
    () => volumes.find('config', 'atomic'),
    new EnvhookError('volume "config" is not a configMap, secret, projected or downwardAPI volume'),
  );
  t.throws(() => volumes.find('nope', 'emptyDir'), new EnvhookError('volume "nope" not found'));
  t.throws(() => volumes.find('../x', 'emptyDir'), new EnvhookError('volume name "../x" is not a valid volume name'));
});

t.test('env sources: emptyDir as it is, atomic-writer volumes through ..data, CSI volumes at mount', async (t) => {
  const pod = makePod(path.join(t.testdir({}), 'kubelet'), {
    emptyDirs: { config: {} },
    atomic: [{ plugin: 'secret', name: 'db', payload: { p: 'P' } }],
    csi: [{ name: 'vault', layout: 'unmounted' }],
  });
  fs.mkdirSync(path.join(pod.dir, 'volumes/kubernetes.io~nfs/share'), { recursive: true });
  const volumes = createVolumeLocator({ pod: { dir: pod.dir, uid: pod.uid, from: 'uid' }, overrides: new Map([['over', 'rel/dir']]) });
  t.same(volumes.envSource('config'), { dir: pod.emptyDir('config'), viaData: false });
  t.same(volumes.envSource('db'), { dir: path.join(pod.dir, 'volumes/kubernetes.io~secret/db'), viaData: true });
  t.same(
    volumes.envSource('vault'),
    { dir: pod.csiMount('vault'), viaData: true },
    'found before the driver mounted it: its files are then missing',
  );
  t.same(volumes.envSource('over'), { dir: path.resolve('rel/dir'), viaData: true });
  t.throws(
    () => volumes.envSource('share'),
    new EnvhookError('volume "share" is not an emptyDir, configMap, secret, projected, downwardAPI or CSI volume'),
  );
  t.throws(
    () => volumes.envSource('nope'),
    new EnvhookError(
      'volume "nope" not found in the pod: the kubelet sets up only volumes that a container of the pod mounts; mount it in one of the pod\'s containers (the init container is enough)',
    ),
  );
});

t.test("a misspelt volume: the nearest of the pod's volumes (any plugin, or an override), as lint names it", async (t) => {
  const pod = makePod(path.join(t.testdir({}), 'kubelet'), {
    emptyDirs: { config: {} },
    atomic: [{ plugin: 'secret', name: 'db-secret', payload: { p: 'P' } }],
  });
  const volumes = createVolumeLocator({ pod: { dir: pod.dir, uid: pod.uid, from: 'uid' }, overrides: new Map([['vault', 'rel/dir']]) });
  const NOT_SET_UP =
    "the kubelet sets up only volumes that a container of the pod mounts; mount it in one of the pod's containers (the init container is enough)";
  t.throws(
    () => volumes.envSource('confg'),
    new EnvhookError(`volume "confg" not found in the pod (did you mean "config"?): ${NOT_SET_UP}`),
  );
  t.throws(
    () => volumes.envSource('db-secert'),
    new EnvhookError(`volume "db-secert" not found in the pod (did you mean "db-secret"?): ${NOT_SET_UP}`),
  );
  t.throws(() => volumes.envSource('valt'), new EnvhookError(`volume "valt" not found in the pod (did you mean "vault"?): ${NOT_SET_UP}`));
  t.throws(() => volumes.find('db-secrt', 'atomic'), new EnvhookError('volume "db-secrt" not found (did you mean "db-secret"?)'));
  t.throws(
    () => volumes.envSource('other'),
    new EnvhookError(`volume "other" not found in the pod: ${NOT_SET_UP}`),
    'nothing near: the set-up hint alone',
  );
});

t.test('overrides win and need no pod; no pod at all', async (t) => {
  t.equal(findVolume({ pod: undefined, overrides: new Map([['v', 'rel/dir']]) }, 'v', 'emptyDir'), path.resolve('rel/dir'));
  t.throws(
    () => findVolume({ pod: undefined, overrides: new Map() }, 'v', 'emptyDir'),
    new EnvhookError('volume "v" not found: no pod directory (no kubelet-made mount in config.json; use --pod-dir or --volume)'),
  );
});

t.test('--volume NAME=DIR', async (t) => {
  t.same(
    [...parseVolumeFlags(['a=/x', 'b=/y=z'])],
    [
      ['a', '/x'],
      ['b', '/y=z'],
    ],
  );
  for (const bad of ['a', '=x', 'a='])
    t.throws(() => parseVolumeFlags([bad]), new EnvhookError(`--volume ${JSON.stringify(bad)}: expected NAME=DIR`));
});

t.test('one start: a volume found is remembered, one not found is looked for again', async (t) => {
  const pod = makePod(path.join(t.testdir({}), 'kubelet'), { emptyDirs: { config: { a: 'A' } } });
  const volumes = createVolumeLocator({ pod: { dir: pod.dir, uid: pod.uid, from: 'uid' }, overrides: new Map() });
  t.equal(volumes.find('config', 'emptyDir'), pod.emptyDir('config'));
  t.same(volumes.envSource('config'), { dir: pod.emptyDir('config'), viaData: false });
  fs.rmSync(pod.emptyDir('config'), { recursive: true });
  t.equal(volumes.find('config', 'emptyDir'), pod.emptyDir('config'), 'found once: the same answer for the rest of the start');
  t.same(volumes.envSource('config'), { dir: pod.emptyDir('config'), viaData: false });
  t.throws(() => volumes.find('later', 'emptyDir'), new EnvhookError('volume "later" not found'));
  fs.mkdirSync(path.join(pod.dir, 'volumes/kubernetes.io~empty-dir/later'));
  t.equal(volumes.find('later', 'emptyDir'), path.join(pod.dir, 'volumes/kubernetes.io~empty-dir/later'), 'not found: looked for again');
  const next = createVolumeLocator({ pod: { dir: pod.dir, uid: pod.uid, from: 'uid' }, overrides: new Map() });
  t.throws(() => next.find('config', 'emptyDir'), new EnvhookError('volume "config" not found'), 'the next start looks again');
});
