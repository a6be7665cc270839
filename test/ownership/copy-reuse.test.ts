// A pod's owned copy made once: the starts after the first (its other containers, a restarted
// one) use it as it is while the kubelet's payload, the owners and the copy are those of the
// copy made; anything else makes the copy again. Through the pipeline (runAsync, as the NRI
// worker runs it), with a copier that counts the copy jobs it runs.
import t, { type Test } from 'tap';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { runAsync } from '../../src/pipeline.ts';
import { inlineCopier, type Copier } from '../../src/mirror/copier.ts';
import { copyVolume } from '../../src/mirror/copy.ts';
import { factsFromSpec } from '../../src/facts/spec-facts.ts';
import { silentLogger, type Logger } from '../../src/log.ts';
import { rememberedCopies } from '../../src/ownership/copy-reuse.ts';
import { atomicWrite, makePod, rawAnnotations } from '../../scripts/kubelet-pod.ts';

const CANARY = 'CANARY-reuse-5c1f';

function setup(t: Test, dir = t.testdir({})) {
  const kubeletRoot = path.join(dir, 'kubelet');
  const payload = { 'key.pem': { data: `${CANARY}-1`, mode: 0o400 }, 'ca.crt': { data: 'ca', mode: 0o444 } };
  const pod = makePod(kubeletRoot, { atomic: [{ plugin: 'secret', name: 'keys', payload }] });
  const volume = path.join(pod.dir, 'volumes/kubernetes.io~secret/keys');
  const runDir = path.join(dir, 'run');
  const copy = path.join(runDir, 'volumes', pod.uid, 'keys');
  const inline = inlineCopier();
  const jobs: string[] = [];
  const copier: Copier = {
    ...inline,
    copy: (job) => (jobs.push(job.place.volume), inline.copy(job)),
    copyStart: (start) => (jobs.push(...start.jobs.map((j) => j.place.volume)), inline.copyStart(start)),
  };
  const lines: Record<string, unknown>[] = [];
  const log = {
    ...silentLogger,
    info: (o: Record<string, unknown>) => void lines.push({ ...o, level: 'info' }),
    debug: (o: Record<string, unknown>) => void lines.push({ ...o, level: 'debug' }),
  } as unknown as Logger;
  const start = (
    defaultUser = 1000,
    container = 'app',
    mounts = [{ destination: '/keys', source: volume, type: 'bind', options: ['ro'] }],
  ) => {
    const annotations = {
      ...pod.annotations(container),
      ...rawAnnotations({ 'envhook.io/volumeOwners': [{ volume: 'keys', defaultUser, items: [{ path: 'ca.crt', user: 0 }] }] }),
    };
    const facts = factsFromSpec({ process: { env: ['PATH=/bin'] }, mounts: [...pod.mounts(container), ...mounts], annotations });
    const options = { settings: { kubeletRoot }, stage: 'nri' as const, log, copies: { runDir, keepsIdMappings: false } };
    return runAsync(facts, options, copier, (changes) => changes.owners.flatMap((o) => o.copy?.mounts.map((m) => m.source) ?? []));
  };
  const current = () => fs.readlinkSync(path.join(copy, '..data'));
  return { start, jobs, copy, volume, current, lines, payload };
}

t.test('the second container of the pod, and a restart, use the copy the first start made: no job, nothing written', async (t) => {
  const s = setup(t);
  const first = await s.start();
  t.same(first.output, [s.copy], 'the mount points at the copy');
  t.same(s.jobs, ['keys'], 'the first start made the copy');
  const made = s.current();
  const ino = fs.statSync(path.join(s.copy, '..data', 'key.pem')).ino;
  for (const container of ['sidecar', 'app']) {
    const again = await s.start(1000, container);
    t.same(again.output, [s.copy], `${container}: the same copy mounted`);
    t.same(
      again.plan.owners.map((o) => [o.path, o.uid]),
      first.plan.owners.map((o) => [o.path, o.uid]),
      `${container}: the same files owned, as the plan reports them`,
    );
  }
  t.same(s.jobs, ['keys'], 'no copy job after the first');
  t.equal(s.current(), made, "the copy's ..data untouched");
  t.equal(fs.statSync(path.join(s.copy, '..data', 'key.pem')).ino, ino, 'the file untouched');
  t.equal(fs.statSync(path.join(s.copy, 'key.pem')).uid, 1000);
  t.equal(fs.statSync(path.join(s.copy, 'ca.crt')).uid, 0);
  const copyLines = s.lines.filter((l) => l.layout === 'copy');
  t.same(
    copyLines.map((l) => [l.reused, l.level]),
    [
      [false, 'info'],
      [true, 'debug'],
      [true, 'debug'],
    ],
    'the log line says when the copy was used as it was (at debug: nothing changed)',
  );
  t.notMatch(JSON.stringify(s.lines), CANARY, 'no byte of the payload logged');
});

t.test('a rewrite by the kubelet: the next start copies the new payload', async (t) => {
  const s = setup(t);
  await s.start();
  atomicWrite(s.volume, { ...s.payload, 'key.pem': { data: `${CANARY}-2`, mode: 0o400 } });
  await s.start(1000, 'sidecar');
  t.same(s.jobs, ['keys', 'keys'], 'copied again');
  t.equal(fs.readFileSync(path.join(s.copy, 'key.pem'), 'utf8'), `${CANARY}-2`, 'the copy holds the new payload');
  t.equal(s.current(), fs.readlinkSync(path.join(s.volume, '..data')), "the copy's ..data names the kubelet's new directory");
  await s.start(1000, 'app');
  t.same(s.jobs, ['keys', 'keys'], 'and that copy is used by the next start');
});

t.test('other owners: copied again, with them', async (t) => {
  const s = setup(t);
  await s.start(1000);
  await s.start(2000, 'sidecar');
  t.same(s.jobs, ['keys', 'keys']);
  t.equal(fs.statSync(path.join(s.copy, 'key.pem')).uid, 2000);
});

t.test('a copy swapped by another writer (the watcher, a shim) since, or removed: copied again', async (t) => {
  const s = setup(t);
  await s.start();
  copyVolume(
    { runDir: path.dirname(path.dirname(path.dirname(s.copy))), podUid: path.basename(path.dirname(s.copy)), volume: 'keys' },
    s.volume,
    {
      defaultOwner: { hostUid: 3000 },
      items: new Map(),
    },
  );
  t.equal(fs.statSync(path.join(s.copy, 'key.pem')).uid, 3000, 'the other writer swapped the copy');
  await s.start(1000, 'sidecar');
  t.same(s.jobs, ['keys', 'keys'], 'not taken as it is');
  t.equal(fs.statSync(path.join(s.copy, 'key.pem')).uid, 1000, 'the start made its own');

  fs.rmSync(s.copy, { recursive: true });
  const again = await s.start(1000, 'app');
  t.same(s.jobs, ['keys', 'keys', 'keys'], 'a removed copy is made again');
  t.same(again.output, [s.copy]);
  t.equal(fs.statSync(path.join(s.copy, 'key.pem')).uid, 1000);
  t.ok(rememberedCopies() >= 1);
});

t.test('a container that mounts the volume by subPath: the job finds its entry every time', async (t) => {
  // Not t.testdir(): tap removes that before the teardowns that unmount.
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'envhook-reuse-'));
  const binds: string[] = [];
  t.teardown(() => {
    for (const b of binds) execFileSync('umount', [b]);
    fs.rmSync(tmp, { recursive: true, force: true });
  });
  const s = setup(t, tmp);
  await s.start();
  // What the kubelet does for `subPath: key.pem`: a bind mount of the entry under volume-subpaths/.
  const to = path.join(path.dirname(path.dirname(path.dirname(s.volume))), 'volume-subpaths', 'keys', 'app', '0');
  fs.mkdirSync(path.dirname(to), { recursive: true });
  fs.writeFileSync(to, '');
  execFileSync('mount', ['--bind', fs.realpathSync(path.join(s.volume, 'key.pem')), to]);
  binds.push(to);
  const subPath = { destination: '/etc/key.pem', source: to, type: 'bind', options: ['ro'] };
  for (const container of ['app', 'app']) {
    const r = await s.start(1000, container, [subPath]);
    t.same(r.output, [path.join(s.copy, '..data', 'key.pem')], 'the subPath mount points at the entry in the copy');
  }
  t.same(s.jobs, ['keys', 'keys', 'keys'], 'a job for each start with a subPath mount');
});
