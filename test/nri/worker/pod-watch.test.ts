// The NRI daemon's owner watcher (src/nri/pod-watch.ts) on real files: kubelet-like pods whose
// secret volumes the atomic-writer double rewrites, real inotify, real chown, the kernel's own
// count of watches, and the exact log lines (never a file's content or an annotation value).
import t, { type Test } from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { createLogger } from '../../../src/log.ts';
import { createPodWatcher } from '../../../src/nri/worker/pod-watch.ts';
import { CONTAINER_STOPPED } from '../../../src/nri/wire/nri-schema.ts';
import type { NriPod } from '../../../src/facts/nri-facts.ts';
import type { NriSyncContainer } from '../../../src/nri/wire/plain-data.ts';
import { atomicWrite, makeAtomicVolume, makePod, type Pod } from '../../../scripts/kubelet-pod.ts';
import { nriRequest } from '../../helpers/nri/requests.ts';
import { inotifyWatches } from '../../helpers/watch/inotify.ts';
import { sleep, waitFor } from '../../helpers/wait.ts';

const CANARY = 'CANARY-pod-watch-4b1e-never-logged';
const RUNNING = 3; // NRI's CONTAINER_RUNNING
const OWNERS = JSON.stringify([{ volume: 'keys', defaultUser: 1000 }]);

interface Node {
  root: string;
  watcher: ReturnType<typeof createPodWatcher>;
  log: () => { msg: string; [k: string]: unknown }[];
  logText: () => string;
  pod(uid: string, annotations?: Record<string, string>): { pod: Pod; vol: string; nri: NriPod };
}

function setup(t: Test): Node {
  const dir = t.testdir();
  const root = path.join(dir, 'kubelet');
  const logFile = path.join(dir, 'envhook.log');
  const watcher = createPodWatcher({ kubeletRoot: root, log: createLogger(logFile, 'debug') });
  t.teardown(() => watcher.close());
  const logText = () => (fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8') : '');
  return {
    root,
    watcher,
    logText,
    log: () =>
      logText()
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l)),
    pod(uid, annotations = { 'envhook.io/volumeOwners': OWNERS }) {
      const pod = makePod(root, {}, uid);
      const vol = makeAtomicVolume(pod, 'secret', 'keys', { key: { data: CANARY, mode: 0o400 } });
      return {
        pod,
        vol,
        nri: { id: `sandbox-${uid}`, name: `web-${uid}`, namespace: 'default', uid, annotations: { other: CANARY, ...annotations } },
      };
    },
  };
}

const ownerOf = (vol: string) => fs.lstatSync(path.join(vol, '..data/key')).uid;
const running = (p: NriPod, state = RUNNING): NriSyncContainer => ({
  id: `c-${p.id}`,
  name: 'app',
  podSandboxId: p.id,
  annotations: {},
  state,
  mounts: [],
});
const rewrite = (vol: string, i: number) => atomicWrite(vol, { key: { data: `${CANARY}${i}`, mode: 0o400 } });

t.test('Synchronize: a running pod with volumeOwners is watched, owned at once, and every rewrite after', async (t) => {
  const n = setup(t);
  const a = n.pod('pod-a');
  const before = inotifyWatches();
  await n.watcher.synchronized([a.nri], [running(a.nri)]);
  await waitFor(() => ownerOf(a.vol) === 1000, 5000, 'the pass at Synchronize');
  for (let i = 0; i < 10; i++) {
    rewrite(a.vol, i);
    await waitFor(() => ownerOf(a.vol) === 1000, 5000, `rewrite ${i}`);
  }
  t.ok(inotifyWatches() > before, 'the volume has an inotify watch');
  const line = n.log().find((l) => l.msg === 'nri: watching pod volume owners');
  t.match(line, { podUid: 'pod-a', pod: 'web-pod-a', namespace: 'default', sandbox: 'sandbox-pod-a', volumes: 1, why: 'Synchronize' });
  t.match(
    n.log().find((l) => l.msg === 'nri: synchronized owner watches'),
    { runtimePods: 1, containers: 1, watchedPods: 1, volumes: 1 },
  );
  t.notMatch(n.logText(), CANARY, 'no file content or annotation value logged');
});

t.test('Synchronize: only running pods that ask for owners; a pod not running any more is dropped', async (t) => {
  const n = setup(t);
  const a = n.pod('pod-a');
  const stopped = n.pod('pod-stopped');
  const plain = n.pod('pod-plain', {});
  const bare = n.pod('pod-bare'); // a sandbox with no container yet
  await n.watcher.synchronized(
    [a.nri, stopped.nri, plain.nri, bare.nri],
    [running(a.nri), running(stopped.nri, CONTAINER_STOPPED), running(plain.nri)],
  );
  t.equal(n.watcher.registry.stats().pods, 1, 'one pod watched');
  t.ok(n.watcher.registry.has('pod-a'));
  // A reconnect: the runtime's state now says pod-a's containers have stopped.
  const watches = inotifyWatches();
  await n.watcher.synchronized([a.nri], [running(a.nri, CONTAINER_STOPPED)]);
  t.notOk(n.watcher.registry.has('pod-a'));
  t.ok(inotifyWatches() < watches, 'its watch is closed');
  t.match(
    n.log().find((l) => l.msg === 'nri: pod no longer watched'),
    { podUid: 'pod-a', why: 'not running at Synchronize' },
  );
  rewrite(a.vol, 1);
  await sleep(300);
  t.equal(ownerOf(a.vol), 0, 'a dropped pod is no longer owned after a rewrite');
});

t.test('Synchronize after a gap: rewrites made while nobody watched get their owner (one pass at once)', async (t) => {
  const n = setup(t);
  const a = n.pod('pod-a');
  await n.watcher.synchronized([a.nri], [running(a.nri)]);
  await waitFor(() => ownerOf(a.vol) === 1000, 5000, 'first pass');
  // The daemon was away: the watcher is closed, the kubelet rewrote twice meanwhile.
  n.watcher.close();
  rewrite(a.vol, 1);
  rewrite(a.vol, 2);
  t.equal(ownerOf(a.vol), 0);
  const again = createPodWatcher({ kubeletRoot: n.root, log: createLogger(path.join(path.dirname(n.root), 'second.log'), 'debug') });
  t.teardown(() => again.close());
  await again.synchronized([a.nri], [running(a.nri)]);
  await waitFor(() => ownerOf(a.vol) === 1000, 5000, 'restored by Synchronize');
  t.pass('a new watcher restores the pod from Synchronize');
});

t.test('CreateContainer: the pod is watched once per sandbox and annotation; StopPodSandbox of that sandbox ends it', async (t) => {
  const n = setup(t);
  const a = n.pod('pod-a');
  const req = nriRequest(a.pod, 'app', { annotations: a.nri.annotations });
  req.pod = a.nri;
  const before = inotifyWatches();
  n.watcher.created(req);
  n.watcher.created({ ...req, container: { ...req.container, id: 'ctr-2', name: 'sidecar' } });
  t.equal(n.log().filter((l) => l.msg === 'nri: watching pod volume owners').length, 1, 'a second container of the pod changes nothing');
  t.match(
    n.log().find((l) => l.msg === 'nri: watching pod volume owners'),
    { why: 'CreateContainer', sandbox: 'sandbox-pod-a' },
  );
  rewrite(a.vol, 1);
  await waitFor(() => ownerOf(a.vol) === 1000, 5000, 'rewrite owned');

  // The stop of an earlier sandbox of the same pod UID (the kubelet replaced it) leaves the watch.
  n.watcher.podEnded({ ...a.nri, id: 'sandbox-old' }, 'stop');
  t.ok(n.watcher.registry.has('pod-a'), 'an earlier sandbox ending leaves the watch');
  n.watcher.podEnded(a.nri, 'stop');
  t.notOk(n.watcher.registry.has('pod-a'), 'StopPodSandbox ends it');
  t.equal(inotifyWatches(), before, 'no watch left behind');
  t.match(
    n.log().find((l) => l.msg === 'nri: pod no longer watched'),
    { podUid: 'pod-a', why: 'StopPodSandbox' },
  );
  rewrite(a.vol, 2);
  await sleep(300);
  t.equal(ownerOf(a.vol), 0, 'no longer owned after the pod ended');

  // RemovePodSandbox (a runtime that sends it) ends a watch the same way.
  n.watcher.created(req);
  t.ok(n.watcher.registry.has('pod-a'));
  n.watcher.podEnded(a.nri, 'remove');
  t.notOk(n.watcher.registry.has('pod-a'));
  t.equal(inotifyWatches(), before);
});

t.test("the pod's directory goes away: the pod is dropped, no watch left", async (t) => {
  const n = setup(t);
  const a = n.pod('pod-a');
  const before = inotifyWatches();
  await n.watcher.synchronized([a.nri], [running(a.nri)]);
  await waitFor(() => ownerOf(a.vol) === 1000, 5000, 'first pass');
  fs.rmSync(a.pod.dir, { recursive: true });
  await waitFor(
    () => !n.watcher.registry.has('pod-a') && n.log().some((l) => l.msg === 'nri: pod no longer watched'),
    10_000,
    'pod dropped',
  );
  t.match(
    n.log().find((l) => l.msg === 'nri: pod no longer watched'),
    { podUid: 'pod-a', why: 'its volumes are gone' },
  );
  t.equal(inotifyWatches(), before, 'no watch left behind');
});

t.test('what cannot be watched is logged, never thrown: bad annotation, missing volume, missing pod directory', async (t) => {
  const n = setup(t);
  const bad = n.pod('pod-bad', { 'envhook.io/volumeOwners': `[{"volume":"keys","defaultUser":"${CANARY}"}]` });
  const missing = n.pod('pod-missing', {
    'envhook.io/volumeOwners': JSON.stringify([
      { volume: 'keys', defaultUser: 1000 },
      { volume: 'absent', defaultUser: 1000 },
    ]),
  });
  const gone: NriPod = {
    id: 's-gone',
    name: 'gone',
    namespace: 'default',
    uid: 'pod-gone',
    annotations: { 'envhook.io/volumeOwners': OWNERS },
  };
  const traversal: NriPod = { ...gone, uid: '../pod-a' };
  await t.resolves(
    async () =>
      n.watcher.synchronized(
        [bad.nri, missing.nri, gone, traversal],
        [running(bad.nri), running(missing.nri), running(gone), running(traversal)],
      ),
    'never throws, never rejects',
  );
  t.same(
    [...['pod-bad', 'pod-missing', 'pod-gone']].map((u) => n.watcher.registry.has(u)),
    [false, true, false],
    'only the pod with a watchable volume',
  );
  const warns = n.log().filter((l) => l.msg.startsWith('nri: pod not watched: '));
  t.match(
    warns.map((l) => [l.podUid, l.msg]),
    [
      ['pod-bad', /^nri: pod not watched: annotation "envhook\.io\/volumeOwners"/],
      ['pod-gone', `nri: pod not watched: pod directory ${path.join(n.root, 'pods/pod-gone')} not found`],
      ['../pod-a', 'nri: pod not watched: pod UID "../pod-a" is not a valid pod UID'],
    ],
  );
  t.match(
    n.log().find((l) => l.msg === 'nri: volume not watched'),
    { podUid: 'pod-missing', volume: 'absent', reason: 'volume "absent" not found' },
  );
  t.notMatch(n.logText(), CANARY, 'no annotation value or file content logged');
});

t.test('an idmapped mount of the volume: the container UID is written as is; mixed mounts are not watched', async (t) => {
  const n = setup(t);
  const a = n.pod('pod-a');
  const idmapped = { destination: '/keys', source: a.vol, type: 'bind', options: ['rbind', 'ro', 'idmap'] };
  await n.watcher.synchronized(
    [a.nri],
    [
      { ...running(a.nri), mounts: [idmapped] },
      { ...running(a.nri), mounts: [{ ...idmapped, options: ['rbind', 'ro'] }] },
    ],
  );
  t.notOk(n.watcher.registry.has('pod-a'));
  t.match(
    n.log().find((l) => l.msg === 'nri: volume not watched'),
    { volume: 'keys', reason: 'volume "keys" is mounted both idmapped and not idmapped' },
  );
  await n.watcher.synchronized([a.nri], [{ ...running(a.nri), mounts: [idmapped] }]);
  await waitFor(() => ownerOf(a.vol) === 1000, 5000, 'owned as 1000');
});

t.test('the inotify limit reached: logged once for all pods, the volumes polled, rewrites still owned', async (t) => {
  const dir = t.testdir();
  const root = path.join(dir, 'kubelet');
  const logFile = path.join(dir, 'envhook.log');
  const limit = () => {
    throw Object.assign(new Error('no space'), { code: 'ENOSPC' });
  };
  const watcher = createPodWatcher({ kubeletRoot: root, log: createLogger(logFile, 'debug'), registry: { watch: limit, pollMs: 50 } });
  t.teardown(() => watcher.close());
  const vols = ['pod-a', 'pod-b'].map((uid) => {
    const pod = makePod(root, {}, uid);
    const vol = makeAtomicVolume(pod, 'secret', 'keys', { key: { data: CANARY, mode: 0o400 } });
    const req = nriRequest(pod, 'app', { annotations: { 'envhook.io/volumeOwners': OWNERS } });
    t.doesNotThrow(() => watcher.created(req), `${uid}: the start is not failed`);
    return vol;
  });
  t.match(watcher.registry.stats(), { pods: 2, volumes: 2, watches: 0, polled: 2 });
  for (const vol of vols) {
    rewrite(vol, 1);
    await waitFor(() => ownerOf(vol) === 1000, 5000, 'owned by polling');
  }
  const lines = fs
    .readFileSync(logFile, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  t.same(
    lines.filter((l) => /inotify limit/.test(l.msg)).map((l) => [l.msg, l.code]),
    [
      [
        'inotify limit reached: the kernel refused a watch (ENOSPC; raise fs.inotify.max_user_watches): volumes without a watch are polled every 50 ms instead (logged once; the count of refused watches is in the status)',
        'ENOSPC',
      ],
    ],
    'one line for the process',
  );
});

// containerd 1.7 with NRI 0.6.1 starts its pre-installed plugins without a Synchronize: a plugin
// process started again after a runtime restart knows the running pods only from the records.
t.test('restore(): a new process watches the recorded pods again, without a Synchronize', async (t) => {
  const dir = t.testdir();
  const root = path.join(dir, 'kubelet');
  const runDir = path.join(dir, 'run');
  const records = path.join(runDir, 'nri-owners');
  const logFile = path.join(dir, 'envhook.log');
  const make = (log = logFile) => createPodWatcher({ kubeletRoot: root, log: createLogger(log, 'debug'), runDir });
  const first = make();
  const pods = ['pod-a', 'pod-b', 'pod-gone', 'pod-ended'].map((uid) => {
    const pod = makePod(root, {}, uid);
    const vol = makeAtomicVolume(pod, 'secret', 'keys', { key: { data: CANARY, mode: 0o400 } });
    // The container mounts the kubelet's volume (no copy made for it): watched in place.
    const mounts = [...pod.mounts('app'), { destination: '/keys', source: vol, type: 'bind', options: ['rbind', 'ro'] }];
    const req = nriRequest(pod, 'app', { annotations: { 'envhook.io/volumeOwners': OWNERS }, mounts });
    first.created(req);
    return { pod, vol, nri: req.pod };
  });
  const [a, b, gone, ended] = pods as [(typeof pods)[0], (typeof pods)[0], (typeof pods)[0], (typeof pods)[0]];
  t.same(fs.readdirSync(records).sort(), ['pod-a.json', 'pod-b.json', 'pod-ended.json', 'pod-gone.json'], 'one record a watched pod');
  t.equal(fs.statSync(records).mode & 0o777, 0o700, "the records directory is root's alone");
  first.podEnded(ended.nri, 'stop');
  t.notOk(fs.existsSync(path.join(records, 'pod-ended.json')), 'a pod that ended: its record goes with its watch');
  first.close();
  t.same(fs.readdirSync(records).sort(), ['pod-a.json', 'pod-b.json', 'pod-gone.json'], 'the records outlive the process');

  // While no process runs: the kubelet rewrites, and one pod goes with its directory.
  for (const p of [a, b]) rewrite(p.vol, 1);
  fs.rmSync(gone.pod.dir, { recursive: true });
  fs.writeFileSync(path.join(records, 'pod-x.json'), `{"version":1,"podUid":"pod-x","podDir":"/etc","volumes":[],"sandbox":"${CANARY}"}`);

  const secondLog = path.join(dir, 'second.log');
  const second = make(secondLog);
  t.teardown(() => second.close());
  await second.restore();
  for (const p of [a, b]) await waitFor(() => ownerOf(p.vol) === 1000, 5000, `${p.pod.uid}: owned at restore`);
  rewrite(a.vol, 2);
  await waitFor(() => ownerOf(a.vol) === 1000, 5000, 'a rewrite after the restore owned');
  const lines = fs
    .readFileSync(secondLog, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  t.same(
    lines
      .filter((l) => l.msg === 'nri: watching pod volume owners')
      .map((l) => [l.podUid, l.sandbox, l.why])
      .sort(),
    [
      ['pod-a', a.nri.id, 'restore'],
      ['pod-b', b.nri.id, 'restore'],
    ],
  );
  t.notOk(fs.existsSync(path.join(records, 'pod-gone.json')), "a gone pod's record is removed");
  t.match(
    lines.find((l) => l.podUid === 'pod-x'),
    { msg: `nri: owners record refused: owners record ${records}/pod-x.json: /podDir: must be a normalised path ending in the pod UID` },
  );
  t.notMatch(fs.readFileSync(secondLog, 'utf8'), CANARY, 'nothing of a file or a record logged');

  // The sandbox the record names ends the restored watch; a Synchronize, where one comes, decides.
  second.podEnded(b.nri, 'stop');
  t.notOk(second.registry.has('pod-b'));
  await second.synchronized([], []);
  t.notOk(second.registry.has('pod-a'), 'a restored pod the runtime does not list is dropped at Synchronize');
  t.same(fs.readdirSync(records), ['pod-x.json'], 'and its record removed');
});

t.test('restore(): a records directory others can write is not read', async (t) => {
  const dir = t.testdir();
  const runDir = path.join(dir, 'run');
  fs.mkdirSync(path.join(runDir, 'nri-owners'), { recursive: true, mode: 0o700 });
  fs.chmodSync(path.join(runDir, 'nri-owners'), 0o777);
  const logFile = path.join(dir, 'envhook.log');
  const w = createPodWatcher({ kubeletRoot: path.join(dir, 'kubelet'), log: createLogger(logFile, 'debug'), runDir });
  t.teardown(() => w.close());
  await t.resolves(w.restore(), 'restore() resolves');
  t.match(
    fs.readFileSync(logFile, 'utf8'),
    `nri: owners records not read: run directory ${path.join(
      runDir,
      'nri-owners',
    )} must be owned by root and not writable by group or others`,
  );
});

t.test("owned copies: CreateContainer's copy followed after each rewrite, recorded, restored; removed when the pod ends", async (t) => {
  const { createNriHandler } = await import('../../../src/nri/worker/handler.ts');
  const dir = t.testdir();
  const root = path.join(dir, 'kubelet');
  const runDir = path.join(dir, 'run');
  const logFile = path.join(dir, 'envhook.log');
  const log = createLogger(logFile, 'debug');
  const handler = createNriHandler({ settings: { kubeletRoot: root }, log, runDir });
  const watcher = createPodWatcher({ kubeletRoot: root, log, runDir });
  t.teardown(() => watcher.close());
  const pod = makePod(root, {}, 'pod-c');
  const vol = makeAtomicVolume(pod, 'secret', 'keys', { key: { data: `${CANARY}0`, mode: 0o400 } });
  const req = nriRequest(pod, 'app', {
    annotations: { 'envhook.io/volumeOwners': OWNERS },
    mounts: [...pod.mounts('app'), { destination: '/keys', source: vol, type: 'bind', options: ['rbind', 'ro'] }],
  });
  const adjustment = await handler(req);
  const copy = path.join(runDir, 'volumes', 'pod-c', 'keys');
  t.same(
    adjustment.mounts,
    [{ destination: '/keys', source: copy, type: 'bind', options: ['rbind', 'ro'] }],
    'the mount pointed at the copy',
  );
  t.equal(fs.statSync(path.join(copy, 'key')).uid, 1000, 'the copy is owned before the container exists');
  watcher.created(req, adjustment);
  const view = () => `${fs.readFileSync(path.join(copy, 'key'), 'utf8')}:${fs.statSync(path.join(copy, 'key')).uid}`;
  rewrite(vol, 1);
  await waitFor(() => view() === `${CANARY}1:1000`, 5000, 'a rewrite copied');
  t.equal(ownerOf(vol), 0, "the kubelet's file is left root's");
  const record = JSON.parse(fs.readFileSync(path.join(runDir, 'nri-owners', 'pod-c.json'), 'utf8'));
  t.match(record.volumes, [{ volume: 'keys', copy: true }], 'recorded as copied');
  t.notOk('inPlace' in record.volumes[0], 'and not chowned in place');
  watcher.close();

  // A new process: the recorded copy is followed again.
  const second = createPodWatcher({ kubeletRoot: root, log, runDir });
  t.teardown(() => second.close());
  await second.restore();
  rewrite(vol, 2);
  await waitFor(() => view() === `${CANARY}2:1000`, 5000, 'a rewrite after the restore copied');
  t.match(second.registry.stats(), { copies: 1 });
  second.podEnded(req.pod, 'stop');
  t.notOk(fs.existsSync(path.dirname(copy)), "StopPodSandbox removes the pod's copies");

  // Copies of a pod no container runs in are removed at Synchronize.
  await handler(req);
  t.ok(fs.existsSync(copy));
  await second.synchronized([], []);
  t.notOk(fs.existsSync(path.dirname(copy)), 'a pod not running at Synchronize: its copies removed');
  t.notMatch(fs.readFileSync(logFile, 'utf8'), CANARY, 'no content logged');
});

// A container created while envhook was away reads the kubelet's volume (Synchronize: watched in
// place); evicted, the kubelet creates it again and CreateContainer points its mount at the owned
// copy. The same volume directory is now also read through the copy: the pod's watch must follow
// the copy from then on, not only at the next worker's restore.
t.test('a missed container created again through the copy: its copy is followed from its CreateContainer on', async (t) => {
  const { createNriHandler } = await import('../../../src/nri/worker/handler.ts');
  const dir = t.testdir();
  const root = path.join(dir, 'kubelet');
  const runDir = path.join(dir, 'run');
  const logFile = path.join(dir, 'envhook.log');
  const log = createLogger(logFile, 'debug');
  const handler = createNriHandler({ settings: { kubeletRoot: root }, log, runDir });
  const watcher = createPodWatcher({ kubeletRoot: root, log, runDir });
  t.teardown(() => watcher.close());
  const pod = makePod(root, {}, 'pod-evicted');
  const vol = makeAtomicVolume(pod, 'secret', 'keys', { key: { data: `${CANARY}0`, mode: 0o400 } });
  const mount = { destination: '/keys', source: vol, type: 'bind', options: ['rbind', 'ro'] };
  const req = nriRequest(pod, 'app', { annotations: { 'envhook.io/volumeOwners': OWNERS }, mounts: [...pod.mounts('app'), mount] });
  // Synchronize: the missed container mounts the kubelet's directory.
  await watcher.synchronized(
    [req.pod],
    [{ id: 'c-missed', name: 'app', podSandboxId: req.pod.id, annotations: {}, state: RUNNING, mounts: [mount] }],
  );
  t.match(watcher.registry.stats(), { volumes: 1, copies: 0 }, 'watched in place');
  // Evicted and created again: the adjustment points the mount at the copy.
  const adjustment = await handler(req);
  const copy = path.join(runDir, 'volumes', 'pod-evicted', 'keys');
  t.same(
    adjustment.mounts?.map((m) => m.source),
    [copy],
    'the new container reads the copy',
  );
  watcher.created(req, adjustment);
  t.match(watcher.registry.stats(), { copies: 1 }, 'the copy is watched');
  const view = () => `${fs.readFileSync(path.join(copy, 'key'), 'utf8')}:${fs.statSync(path.join(copy, 'key')).uid}`;
  for (const i of [1, 2]) {
    rewrite(vol, i);
    await waitFor(() => view() === `${CANARY}${i}:1000`, 5000, `rewrite ${i} reaches the copy`);
  }
  // Its record says so: a worker started after a kill follows the copy too.
  const record = JSON.parse(fs.readFileSync(path.join(runDir, 'nri-owners', 'pod-evicted.json'), 'utf8'));
  t.ok(
    record.volumes.some((v: { copy?: boolean }) => v.copy === true),
    'recorded as copied',
  );
  t.notMatch(fs.readFileSync(logFile, 'utf8'), CANARY, 'no content logged');
});

// A Synchronize of a full node's pods is worked through in slices of the loop after the answer
// (the worker answers the runtime and beats to its supervisor on this loop). A CreateContainer
// that comes between two slices is newer than the Synchronize's list: its watch stays as it made it.
t.test('Synchronize of many pods: the loop turns between slices; a CreateContainer meanwhile is not undone', async (t) => {
  const { createNriHandler } = await import('../../../src/nri/worker/handler.ts');
  const dir = t.testdir();
  const root = path.join(dir, 'kubelet');
  const runDir = path.join(dir, 'run');
  const log = createLogger(path.join(dir, 'envhook.log'), 'info');
  const handler = createNriHandler({ settings: { kubeletRoot: root }, log, runDir });
  const watcher = createPodWatcher({ kubeletRoot: root, log, runDir });
  t.teardown(() => watcher.close());
  const pods = Array.from({ length: 150 }, (_, i) => {
    const pod = makePod(root, {}, `pod-${String(i).padStart(3, '0')}`);
    const vol = makeAtomicVolume(pod, 'secret', 'keys', { key: { data: `${CANARY}0`, mode: 0o400 } });
    const mount = { destination: '/keys', source: vol, type: 'bind', options: ['rbind', 'ro'] };
    const req = nriRequest(pod, 'app', { annotations: { 'envhook.io/volumeOwners': OWNERS }, mounts: [...pod.mounts('app'), mount] });
    return { pod, vol, mount, req };
  });
  const last = pods.at(-1)!;
  // The last pod's container, created while envhook was away, mounts the kubelet's directory; its
  // successor, created between two slices, reads the copy.
  const adjustment = await handler(last.req);
  let turnedAt: number | undefined;
  const sync = watcher.synchronized(
    pods.map((p) => p.req.pod),
    pods.map((p, i) => ({ id: `c-${i}`, name: 'app', podSandboxId: p.req.pod.id, annotations: {}, state: RUNNING, mounts: [p.mount] })),
  );
  setImmediate(() => {
    turnedAt = watcher.registry.stats().pods;
    watcher.created(last.req, adjustment);
  });
  await sync;
  t.ok(turnedAt !== undefined && turnedAt < pods.length, `the loop turned after ${turnedAt} of ${pods.length} pods`);
  t.match(watcher.registry.stats(), { pods: 150, copies: 1 }, 'every pod watched; the copy of the CreateContainer kept');
  rewrite(last.vol, 1);
  const copy = path.join(runDir, 'volumes', last.pod.uid, 'keys', 'key');
  await waitFor(() => fs.readFileSync(copy, 'utf8') === `${CANARY}1`, 5000, 'a rewrite reaches the copy');
});

// containerd 1.7.24 sends its pre-installed plugin no Synchronize: a pod deleted while no plugin
// ran is known to the next one only by its record, which restore() drops as gone. Its copies go
// with it; so do a volume's copy whose kubelet directory went, and what a worker killed while it
// copied left (a timestamped directory `..data` does not point at).
t.test('restore(): copies of a pod deleted while no plugin ran, of a volume torn down, and a killed copy, are removed', async (t) => {
  const { createNriHandler } = await import('../../../src/nri/worker/handler.ts');
  const dir = t.testdir();
  const root = path.join(dir, 'kubelet');
  const runDir = path.join(dir, 'run');
  const logFile = path.join(dir, 'envhook.log');
  const log = createLogger(logFile, 'debug');
  const handler = createNriHandler({ settings: { kubeletRoot: root }, log, runDir });
  const first = createPodWatcher({ kubeletRoot: root, log, runDir });
  const started = await Promise.all(
    ['pod-deleted', 'pod-job', 'pod-live'].map(async (uid) => {
      const pod = makePod(root, {}, uid);
      const vol = makeAtomicVolume(pod, 'secret', 'keys', { key: { data: `${CANARY}0`, mode: 0o400 } });
      const req = nriRequest(pod, 'app', {
        annotations: { 'envhook.io/volumeOwners': OWNERS },
        mounts: [...pod.mounts('app'), { destination: '/keys', source: vol, type: 'bind', options: ['rbind', 'ro'] }],
      });
      first.created(req, await handler(req));
      return { pod, vol, copy: path.join(runDir, 'volumes', uid, 'keys') };
    }),
  );
  const [deleted, job, live] = started as [(typeof started)[0], (typeof started)[0], (typeof started)[0]];
  for (const p of started) t.ok(fs.existsSync(path.join(p.copy, 'key')), `${p.pod.uid}: copied at CreateContainer`);
  first.close();

  // While no plugin runs: one pod deleted, one pod's volume torn down (its directory kept), and a
  // killed copy's partial payload in the live pod's copy, a minute old.
  fs.rmSync(deleted.pod.dir, { recursive: true });
  fs.rmSync(job.vol, { recursive: true });
  const partial = path.join(live.copy, '..2026_11_29_06_00_00.7');
  fs.mkdirSync(partial, { mode: 0o700 });
  fs.writeFileSync(path.join(partial, 'key'), `${CANARY}x`, { mode: 0o600 });
  const old = new Date(Date.now() - 60_000);
  fs.utimesSync(partial, old, old);

  const second = createPodWatcher({ kubeletRoot: root, log, runDir });
  t.teardown(() => second.close());
  await second.restore();
  t.notOk(fs.existsSync(path.dirname(deleted.copy)), "the deleted pod's copies are removed with its record");
  t.notOk(fs.existsSync(path.join(runDir, 'nri-owners', 'pod-deleted.json')));
  // By the start's sweep, or by the restored watch's first turn, which finds the kubelet's directory gone.
  await waitFor(() => !fs.existsSync(job.copy), 5000, "the torn-down volume's copy is removed");
  t.notOk(fs.existsSync(partial), "the killed copy's partial payload is removed");
  t.equal(fs.readFileSync(path.join(live.copy, 'key'), 'utf8'), `${CANARY}0`, "the live pod's copy is whole");
  t.ok(second.registry.has('pod-live'));
  const lines = fs
    .readFileSync(logFile, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  const removals = lines
    .filter((l) => /removed$/.test(l.msg) && /copy|copies/.test(l.msg))
    .map((l) => [l.msg === 'owned copy removed' ? `nri: ${l.msg}` : l.msg, l.podUid, l.volume, l.why])
    .sort();
  t.same(removals, [
    ['nri: owned copy removed', 'pod-job', 'keys', "the kubelet's volume directory is gone"],
    ['nri: partial owned copy removed', 'pod-live', 'keys', 'left by a copy that did not finish'],
    ["nri: pod's owned copies removed", 'pod-deleted', undefined, 'pod directory is gone'],
  ]);
  t.notMatch(fs.readFileSync(logFile, 'utf8'), CANARY, 'no content logged');
});
