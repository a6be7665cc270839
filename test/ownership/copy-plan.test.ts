// Which volumes are read through an owned copy, and the mounts pointed at it.
import t from 'tap';
import path from 'node:path';
import { planCopy } from '../../src/ownership/copy-plan.ts';
import { closeDataDir, openDataDir } from '../../src/fs/datadir.ts';
import { atomicWrite } from '../../scripts/kubelet-pod.ts';

t.test('a mounted volume gets a copy, its mounts pointed at it; the rest is chowned in place', async (t) => {
  const dir = path.join(t.testdir({}), 'keys');
  atomicWrite(dir, { key: 'K', 'tls/crt': 'C' });
  const data = openDataDir('keys', dir);
  t.teardown(() => closeDataDir(data));
  const v = { volume: 'keys', dir, data, defaultOwner: { uid: 1000, hostUid: 1000 }, items: new Map() };
  const s = { runDir: '/run/envhook', podUid: 'p', keepsIdMappings: false };
  const mounts = [
    { destination: '/keys', source: dir, type: 'bind', options: ['rbind', 'ro'] },
    { destination: '/crt', source: path.join(dir, 'tls/crt'), options: ['rbind', 'ro'] },
    { destination: '/other', source: '/elsewhere', options: [] },
  ];
  const p = planCopy(v, mounts, s)!;
  t.equal(p.dir, '/run/envhook/volumes/p/keys');
  t.same(
    p.mounts.map((m) => [m.destination, m.source, m.type, m.options]),
    [
      ['/keys', '/run/envhook/volumes/p/keys', 'bind', ['rbind', 'ro']],
      ['/crt', '/run/envhook/volumes/p/keys/tls/crt', 'bind', ['rbind', 'ro']],
    ],
  );
  t.same(p.snapshot.visible, ['key', 'tls']);
  t.equal(planCopy(v, [mounts[2]!], s), undefined, 'not mounted by this container (or by subPath only): in place');
  t.equal(planCopy(v, mounts, undefined), undefined, 'no copies at this entry point');
  t.equal(planCopy(v, mounts, { ...s, podUid: undefined }), undefined, 'no trusted pod UID');
  const idmapped = [{ ...mounts[0]!, options: ['rbind', 'ro', 'idmap'] }];
  t.equal(planCopy(v, idmapped, s), undefined, "an idmapped mount where the mount's ID mappings cannot be kept (NRI)");
  t.ok(planCopy(v, idmapped, { ...s, keepsIdMappings: true }), 'kept (config.json): copied');
});
