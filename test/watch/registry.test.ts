// The watcher on volumes rewritten by the atomic-writer double (the kubelet's operations, in its
// order), with real inotify, real chown and the kernel's own count of watches.
import t, { type Test } from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { createRegistry, type RegistryOptions, type WatchVolume } from '../../src/watch/registry.ts';
import { createLogger } from '../../src/log.ts';
import { normalize } from '../../src/ownership/annotation.ts';
import type { UidTranslation } from '../../src/ownership/uidmap.ts';
import { atomicWrite, atomicWriteSteps } from '../../scripts/kubelet-pod.ts';
import { inotifyWatches } from '../helpers/watch/inotify.ts';
import { sleep, waitFor } from '../helpers/wait.ts';

const CANARY = 'CANARY-5e1f-value-never-logged';
const NONE: UidTranslation = { kind: 'none' };

function setup(t: Test, opts: Partial<RegistryOptions> = {}) {
  const dir = t.testdir({ outside: { 'root-only': 'outside' } });
  const logFile = path.join(dir, 'watch.log');
  const registry = createRegistry({ log: createLogger(logFile, 'debug'), ...opts });
  t.teardown(() => registry.close());
  const vol = path.join(dir, 'pods/p1/volumes/kubernetes.io~secret/keys');
  atomicWrite(vol, { key: { data: CANARY, mode: 0o400 }, 'sub/nested': CANARY, pub: CANARY });
  const volume = (owners: unknown, uidMapping = NONE, at = vol): WatchVolume => ({
    dir: at,
    owners: normalize([owners as { volume: string }])[0]!,
    uidMapping,
  });
  const log = () => (fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8') : '');
  return { dir, vol, registry, volume, log, outside: path.join(dir, 'outside/root-only') };
}

const uidOf = (vol: string, rel: string) => fs.lstatSync(path.join(vol, '..data', rel)).uid;
const KEYS = {
  volume: 'keys',
  defaultUser: 1000,
  items: [
    { path: 'pub', user: 0 },
    { path: 'sub/nested', user: 1001 },
  ],
};

t.test('owns the current files at add, and every rewrite after it', async (t) => {
  const s = setup(t);
  s.registry.add('p1', [s.volume(KEYS)]);
  await waitFor(() => uidOf(s.vol, 'key') === 1000, 5000, 'first pass');
  t.same([uidOf(s.vol, 'key'), uidOf(s.vol, 'sub/nested'), uidOf(s.vol, 'pub')], [1000, 1001, 0]);
  for (let i = 0; i < 20; i++) {
    atomicWrite(s.vol, { key: { data: `${CANARY}${i}`, mode: 0o400 }, 'sub/nested': `${CANARY}${i}`, pub: 'P' });
    await waitFor(() => uidOf(s.vol, 'key') === 1000 && uidOf(s.vol, 'sub/nested') === 1001, 5000, `rewrite ${i}`);
  }
  t.equal(fs.lstatSync(path.join(s.vol, '..data/key')).gid, 0, 'group left alone');
  t.equal(uidOf(s.vol, 'pub'), 0, 'user 0 keeps root');
  t.notMatch(s.log(), CANARY, 'no byte of the files in the log, at debug level');
  t.match(s.log(), '"msg":"watching volume owners"');
});

t.test('the new directory is owned before ..data points at it', async (t) => {
  const s = setup(t);
  s.registry.add('p1', [s.volume(KEYS)]);
  await waitFor(() => uidOf(s.vol, 'key') === 1000);
  const old = fs.readlinkSync(path.join(s.vol, '..data'));
  const steps = atomicWriteSteps(s.vol, { key: { data: 'K2', mode: 0o400 }, 'sub/nested': 'N2', 'deeper/a/b/c': 'C' });
  const written = steps.next().value as { step: string; tsDir: string };
  t.equal(written.step, 'written');
  const own = (rel: string) => fs.lstatSync(path.join(written.tsDir, rel)).uid;
  await waitFor(() => own('key') === 1000 && own('sub/nested') === 1001 && own('deeper/a/b/c') === 1000, 5000, 'pending dir owned');
  t.equal(fs.readlinkSync(path.join(s.vol, '..data')), old, '..data still points at the old directory');
  const before = s.registry.stats();
  t.ok(before.ownedBeforeSwap >= 3, `counted as owned before the swap (${before.ownedBeforeSwap})`);
  for (let r = steps.next(); !r.done; r = steps.next());
  t.equal(uidOf(s.vol, 'key'), 1000, 'owned the moment ..data points at it');
  await sleep(50);
  t.equal(s.registry.stats().ownedAfterSwap, before.ownedAfterSwap, 'nothing owned after the swap');
});

t.test('counted: files owned only after the swap (the window a reader can hit)', async (t) => {
  const s = setup(t, { preSwap: false });
  s.registry.add('p1', [s.volume(KEYS)]);
  await waitFor(() => uidOf(s.vol, 'key') === 1000);
  const first = s.registry.stats();
  t.equal(first.ownedAfterSwap, 2, 'the first pass: key and sub/nested (pub stays root, as asked)');
  atomicWrite(s.vol, { key: { data: 'K2', mode: 0o400 }, 'sub/nested': 'N2', pub: 'P' });
  await waitFor(() => s.registry.stats().ownedAfterSwap === 4, 5000, 'the rewrite counted');
  t.equal(s.registry.stats().ownedBeforeSwap, 0, 'no watch on the new directory: nothing owned before the swap');
});

t.test('a burst of rewrites: bounded watches, owners right at the end, remove() leaves no watch', async (t) => {
  const s = setup(t);
  const before = inotifyWatches();
  s.registry.add('p1', [s.volume(KEYS)]);
  await waitFor(() => uidOf(s.vol, 'key') === 1000);
  let most = 0;
  for (let i = 0; i < 300; i++) {
    atomicWrite(s.vol, { key: { data: `K${i}`, mode: 0o400 }, 'sub/nested': `N${i}` });
    if (i % 10 === 0) await new Promise((r) => setImmediate(r));
    most = Math.max(most, s.registry.stats().watches);
  }
  await waitFor(() => uidOf(s.vol, 'key') === 1000 && uidOf(s.vol, 'sub/nested') === 1001, 5000, 'last rewrite owned');
  t.ok(most <= 1 + 2 * 2, `at most the volume and 2 new directories with one subdirectory each are watched (saw ${most})`);
  t.ok(inotifyWatches() - before <= 5, 'the kernel agrees');
  s.registry.remove('p1');
  t.match(s.registry.stats(), { pods: 0, volumes: 0, watches: 0, polled: 0, queued: 0, refusedByKernel: 0, refusedByBound: 0 });
  t.equal(inotifyWatches(), before, 'no inotify watch left behind');
  atomicWrite(s.vol, { key: { data: 'after', mode: 0o400 } });
  await sleep(100);
  t.equal(uidOf(s.vol, 'key'), 0, 'a removed pod is no longer watched');
});

t.test('an inotify limit is logged once; the volumes are polled and still owned', async (t) => {
  let calls = 0;
  const s = setup(t, {
    pollMs: 20,
    watch: () => {
      calls++;
      throw Object.assign(new Error('inotify_add_watch failed'), { code: 'ENOSPC' });
    },
  });
  const second = path.join(s.dir, 'pods/p1/volumes/kubernetes.io~configmap/cfg');
  atomicWrite(second, { 'app.conf': 'x' });
  t.doesNotThrow(() => s.registry.add('p1', [s.volume(KEYS), s.volume({ volume: 'cfg', defaultUser: 1002 }, NONE, second)]));
  t.equal(s.registry.stats().polled, 2);
  await waitFor(() => uidOf(s.vol, 'key') === 1000 && uidOf(second, 'app.conf') === 1002);
  atomicWrite(s.vol, { key: { data: 'K2', mode: 0o400 } });
  await waitFor(() => uidOf(s.vol, 'key') === 1000, 5000, 'polled pass');
  t.ok(calls >= 2);
  t.equal(
    s
      .log()
      .split('\n')
      .filter((l) => l.includes('inotify limit reached')).length,
    1,
    'logged once',
  );
  t.match(s.log(), '"code":"ENOSPC"');
});

t.test('confinement as at start: no symlink followed, odd names and hard links refused', async (t) => {
  const s = setup(t);
  s.registry.add('p1', [s.volume(KEYS)]);
  await waitFor(() => uidOf(s.vol, 'key') === 1000);
  // Not a name the kubelet's writer makes: never owned, even with a file in it.
  fs.mkdirSync(path.join(s.vol, '..evil'));
  fs.writeFileSync(path.join(s.vol, '..evil/f'), 'x');
  const ts = atomicWrite(s.vol, { key: { data: 'K2', mode: 0o400 } });
  fs.symlinkSync(s.outside, path.join(ts, 'planted'));
  fs.linkSync(s.outside, path.join(s.dir, 'outside/second-link'));
  atomicWrite(s.vol, { key: { data: 'K3', mode: 0o400 } });
  await waitFor(() => uidOf(s.vol, 'key') === 1000);
  t.equal(fs.lstatSync(path.join(s.vol, '..evil/f')).uid, 0);
  t.equal(fs.lstatSync(s.outside).uid, 0, 'the outside file keeps its owner');
  // A hard link to an outside file inside the published directory: refused, logged once.
  const cur = path.join(s.vol, fs.readlinkSync(path.join(s.vol, '..data')));
  fs.linkSync(s.outside, path.join(cur, 'hard'));
  s.registry.add('p1', [s.volume(KEYS)]); // a pass now
  s.registry.add('p1', [s.volume(KEYS)]);
  await waitFor(() => s.log().includes('hard links'), 5000, 'warning');
  await sleep(50);
  t.equal(fs.lstatSync(s.outside).uid, 0);
  t.equal(
    s
      .log()
      .split('\n')
      .filter((l) => l.includes('has 3 hard links')).length,
    1,
    'a failure is logged once',
  );
});

t.test('bad input never throws into the caller', async (t) => {
  const s = setup(t);
  const userns: UidTranslation = { kind: 'userns', mappings: [{ containerID: 0, hostID: 100000, size: 65536 }] };
  t.doesNotThrow(() => s.registry.add('p1', [s.volume({ volume: 'keys', defaultUser: 70000 }, userns)]));
  t.equal(s.registry.stats().volumes, 0, 'a UID outside the mapping: not watched');
  t.match(s.log(), 'not watched: volume \\"keys\\": defaultUser 70000 is outside');
  t.doesNotThrow(() => s.registry.add('p2', [s.volume(KEYS, NONE, path.join(s.dir, 'no/such/volume'))]));
  await waitFor(() => s.registry.stats().volumes === 0, 5000, 'missing volume dropped');
  s.registry.add('p3', [s.volume({ volume: 'keys', defaultUser: 1000 }, userns)]);
  await waitFor(() => uidOf(s.vol, 'key') === 101000, 5000, 'mapped through the user namespace');
});

t.test('a volume whose directory goes away is dropped and reported', async (t) => {
  const gone: string[] = [];
  const s = setup(t, { onVolumeGone: (pod, dir) => gone.push(`${pod} ${dir}`) });
  const before = inotifyWatches();
  s.registry.add('p1', [s.volume(KEYS)]);
  await waitFor(() => uidOf(s.vol, 'key') === 1000);
  fs.rmSync(s.vol, { recursive: true });
  await waitFor(() => gone.length === 1, 5000, 'gone');
  t.same(gone, [`p1 ${s.vol}`]);
  t.match(
    s.registry.stats(),
    { pods: 0, volumes: 0, watches: 0, polled: 0, queued: 0, refusedByKernel: 0, refusedByBound: 0 },
    'a pod with no volume left is no longer held',
  );
  t.notOk(s.registry.has('p1'));
  t.equal(inotifyWatches(), before);
});

t.test('a subdirectory made in the new directory after it is watched gets its own watch', async (t) => {
  const s = setup(t);
  s.registry.add('p1', [s.volume(KEYS)]);
  await waitFor(() => uidOf(s.vol, 'key') === 1000);
  t.equal(s.registry.stats().watches, 1);
  const ts = path.join(s.vol, '..2026_11_23_20_00_00.42');
  fs.mkdirSync(ts);
  await waitFor(() => s.registry.stats().watches === 2, 5000, 'new directory watched');
  fs.mkdirSync(path.join(ts, 'sub'));
  await waitFor(() => s.registry.stats().watches === 3, 5000, 'subdirectory watched');
  fs.mkdirSync(path.join(ts, 'sub/deeper'));
  await waitFor(() => s.registry.stats().watches === 4, 5000, 'its subdirectory watched');
  fs.writeFileSync(path.join(ts, 'sub/deeper/f'), 'x', { mode: 0o400 });
  await waitFor(() => fs.lstatSync(path.join(ts, 'sub/deeper/f')).uid === 1000, 5000, 'owned through the nested watch');
  t.equal(fs.readlinkSync(path.join(s.vol, '..data')) === path.basename(ts), false, 'never published');
  fs.rmSync(ts, { recursive: true });
  await waitFor(() => s.registry.stats().watches === 1, 5000, 'watches end with the directory');
});

t.test('bounded: past maxPodWatches a volume is polled, counted and logged once; still owned', async (t) => {
  const s = setup(t, { pollMs: 20, maxPodWatches: 1 });
  const second = path.join(s.dir, 'pods/p1/volumes/kubernetes.io~configmap/cfg');
  atomicWrite(second, { 'app.conf': 'x' });
  s.registry.add('p1', [s.volume(KEYS), s.volume({ volume: 'cfg', defaultUser: 1002 }, NONE, second)]);
  t.match(s.registry.stats(), { volumes: 2, watches: 1, polled: 1, refusedByBound: 1, refusedByKernel: 0 });
  await waitFor(() => uidOf(s.vol, 'key') === 1000 && uidOf(second, 'app.conf') === 1002);
  atomicWrite(second, { 'app.conf': 'y' });
  await waitFor(() => uidOf(second, 'app.conf') === 1002, 5000, 'the polled volume is owned again');
  t.equal(
    s
      .log()
      .split('\n')
      .filter((l) => l.includes("inotify limit reached: envhook's bound of 1 watches for one pod")).length,
    1,
    'logged once',
  );
  s.registry.add('p2', [s.volume({ volume: 'cfg', defaultUser: 1002 }, NONE, second)]);
  t.equal(s.registry.stats().watches, 2, 'another pod has its own bound');
});
