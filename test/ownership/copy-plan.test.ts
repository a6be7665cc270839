// Which volumes are read through an owned copy, and the mounts pointed at it.
import t from 'tap';
import path from 'node:path';
import fs from 'node:fs';
import os from 'node:os';
import { execFileSync } from 'node:child_process';
import { addSubPathMounts, NOT_MOUNTED, planCopy, type PlannedCopy } from '../../src/ownership/copy-plan.ts';
import { runCopyJob } from '../../src/mirror/copy.ts';
import { closeDataDir, openDataDir } from '../../src/fs/datadir.ts';
import { atomicWrite } from '../../scripts/kubelet-pod.ts';

t.test('a mounted volume gets a copy, its mounts pointed at it; one this container does not mount is left alone', async (t) => {
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
  const p = planCopy(v, mounts, s) as PlannedCopy;
  t.equal(p.dir, '/run/envhook/volumes/p/keys');
  t.same(
    p.mounts.map((m) => [m.destination, m.source, m.type, m.options]),
    [
      ['/keys', '/run/envhook/volumes/p/keys', 'bind', ['rbind', 'ro']],
      ['/crt', '/run/envhook/volumes/p/keys/tls/crt', 'bind', ['rbind', 'ro']],
    ],
  );
  t.same(p.subPaths, [], 'no subPath mount');
  t.equal(p.source, data.timestamped, "the kubelet's payload the plan checked");
  t.equal(planCopy(v, [mounts[2]!], s), NOT_MOUNTED, 'not mounted by this container: left alone (no copy, no chown)');
  t.equal(planCopy(v, mounts, undefined), undefined, 'no copies at this entry point');
  t.equal(planCopy(v, mounts, { ...s, podUid: undefined }), undefined, 'no trusted pod UID');
  const idmapped = [{ ...mounts[0]!, options: ['rbind', 'ro', 'idmap'] }];
  t.equal(planCopy(v, idmapped, s), undefined, "an idmapped mount where the mount's ID mappings cannot be kept (NRI)");
  t.ok(planCopy(v, idmapped, { ...s, keepsIdMappings: true }), 'kept (config.json): copied');
});

t.test("a subPath mount (the kubelet's bind mount under volume-subpaths/): pointed at the same entry of the copy's ..data", async (t) => {
  // Not t.testdir(): tap removes that before the teardowns that unmount.
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'envhook-subpath-'));
  const binds: string[] = [];
  t.teardown(() => {
    for (const b of binds) execFileSync('umount', [b]);
    fs.rmSync(tmp, { recursive: true, force: true });
  });
  const pod = path.join(tmp, 'pods/p');
  const dir = path.join(pod, 'volumes/kubernetes.io~secret/keys');
  atomicWrite(dir, { key: 'K', 'tls/crt': 'C' });
  const old = path.join(pod, 'old-key');
  fs.writeFileSync(old, 'from an earlier payload');
  // What the kubelet does for `subPath: tls/crt` (and for a container started before the last rewrite).
  const bind = (from: string, index: number) => {
    const to = path.join(pod, 'volume-subpaths/keys/app', String(index));
    fs.mkdirSync(path.dirname(to), { recursive: true });
    fs.writeFileSync(to, '');
    execFileSync('mount', ['--bind', fs.realpathSync(from), to]);
    binds.push(to);
    return to;
  };
  const crt = bind(path.join(dir, 'tls/crt'), 0);
  const stale = bind(old, 1);
  const data = openDataDir('keys', dir);
  t.teardown(() => closeDataDir(data));
  const v = { volume: 'keys', dir, data, defaultOwner: { uid: 1000, hostUid: 1000 }, items: new Map() };
  const runDir = path.join(tmp, 'run');
  const s = { runDir, podUid: 'p', keepsIdMappings: true };
  const mounts = [
    { destination: '/etc/crt', source: crt, type: 'bind', options: ['rbind', 'ro'] },
    { destination: '/etc/old', source: stale, type: 'bind', options: ['rbind', 'ro'] },
  ];
  const p = planCopy(v, mounts, s) as PlannedCopy;
  t.same(p.mounts, [], 'no mount of the whole volume');
  t.equal(p.subPaths.length, 2, 'both subPath mounts are on the payload file system: the copy job looks for their entries');
  // The copy job finds the entries (the plan reads no payload).
  const r = runCopyJob({ place: p.place, data: { fd: data.fd, timestamped: p.source }, owners: v, want: p.subPaths.map((w) => w.want) });
  t.same(r.found, ['tls/crt', undefined], "the subPath's entry found; the stale one's inode is in no payload");
  addSubPathMounts(p, r.found);
  t.same(
    p.mounts.map((m) => [m.destination, m.source]),
    [['/etc/crt', path.join(runDir, 'volumes/p/keys/..data/tls/crt')]],
    "the subPath's file in the copy; one bound from an earlier payload is left as the kubelet made it",
  );
  t.equal(fs.readFileSync(p.mounts[0]!.source, 'utf8'), 'C');
  t.equal(fs.statSync(p.mounts[0]!.source).uid, 1000, 'owned in the copy');
});
