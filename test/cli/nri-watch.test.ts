// `envhook nri` as a process keeps volume owners across the kubelet's rewrites: fed by the test
// peer that plays the runtime (Synchronize with the running pods, CreateContainer, StopPodSandbox),
// on a kubelet-like pod whose secret volume the atomic-writer double rewrites, with real chown.
// The watches go on while the runtime restarts, come back after the daemon restarts (from
// Synchronize), and end with the pod. No file content or annotation value is ever logged.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { EVENT_STOP_POD_SANDBOX } from '../../src/nri/wire/nri-schema.ts';
import type { NriCreateRequest } from '../../src/facts/nri-facts.ts';
import { atomicWrite, makeAtomicVolume, makePod } from '../../scripts/kubelet-pod.ts';
import { startFakeRuntime, type FakeRuntime } from '../helpers/nri/runtime.ts';
import { freePort, startNriProcess, type NriProcess } from '../helpers/nri/process.ts';
import { envhook } from '../helpers/bundle.ts';
import { nriRequest } from '../helpers/nri/requests.ts';
import { sleep, waitFor } from '../helpers/wait.ts';

const CANARY = 'CANARY-nri-watch-91d2-never-logged';
const OWNERS = JSON.stringify([{ volume: 'keys', defaultUser: 1000 }]);
const RUNNING = 3;

t.setTimeout(300_000); // three daemons and a status CLI on a shared machine
/** The handler's plain request as the peer sends it on the wire (same field names). */
const wire = (r: NriCreateRequest): Record<string, unknown> => ({ pod: r.pod, container: r.container });

t.test('Synchronize restores the watches on every (re)connect and after a daemon restart; StopPodSandbox ends them', async (t) => {
  const dir = t.testdir();
  const root = path.join(dir, 'kubelet');
  const pod = makePod(root, {}, 'pod-synced');
  const vol = makeAtomicVolume(pod, 'secret', 'keys', { key: { data: CANARY, mode: 0o400 } });
  const nriPod = {
    id: 'sandbox-synced',
    name: 'web',
    namespace: 'default',
    uid: pod.uid,
    annotations: { 'envhook.io/volumeOwners': OWNERS, other: CANARY },
  };
  const sync = () => [
    {
      pods: [nriPod],
      // A container that mounts the kubelet's volume itself (created before envhook ran): chowned in place.
      containers: [
        {
          id: 'c1',
          podSandboxId: nriPod.id,
          name: 'app',
          state: RUNNING,
          env: [`SECRET=${CANARY}`],
          mounts: [{ destination: '/keys', source: vol, type: 'bind', options: ['rbind', 'ro'] }],
        },
      ],
      more: false,
    },
  ];
  const owner = () => fs.lstatSync(path.join(vol, '..data/key')).uid;
  let n = 0;
  const rewrite = () => atomicWrite(vol, { key: { data: `${CANARY}${++n}`, mode: 0o400 } });
  const owned = async (what: string) => waitFor(() => owner() === 1000, 10_000, what);

  let rt: FakeRuntime = await startFakeRuntime({ synchronize: sync });
  const sockDir = path.dirname(rt.socketPath);
  const start = () => startNriProcess(['--socket', rt.socketPath, '--kubelet-root', root], { dir });
  let p: NriProcess = start();
  t.teardown(async () => {
    await p.stop();
    await rt.close();
    fs.rmSync(sockDir, { recursive: true, force: true });
  });
  await rt.nextPlugin();
  await owned('the pass at Synchronize');
  for (let i = 0; i < 5; i++) {
    rewrite();
    await owned(`rewrite ${n}`);
  }
  t.pass('Synchronize: watched, and rewrites owned');

  // The runtime restarts: the daemon's watches go on meanwhile; the new Synchronize refreshes them.
  await rt.close();
  fs.mkdirSync(sockDir, { recursive: true });
  rewrite();
  await owned('a rewrite while the runtime is away');
  rt = await startFakeRuntime({ dir: sockDir, synchronize: sync });
  await rt.nextPlugin();
  await waitFor(
    () =>
      p
        .log()
        .split('\n')
        .filter((l) => l.includes('"why":"Synchronize"')).length === 2,
    10_000,
    'second Synchronize',
  );

  // The daemon restarts: nobody watches meanwhile; the new one restores the pod from Synchronize.
  t.equal(await p.stop(), 0);
  const first = p;
  rewrite();
  t.equal(owner(), 0, 'a rewrite while no daemon runs is root-owned');
  p = start();
  const peer = await rt.nextPlugin();
  await owned('restored by the new daemon');
  rewrite();
  await owned('and watched again');

  // StopPodSandbox: the watch ends.
  await peer.stateChange(EVENT_STOP_POD_SANDBOX, { id: nriPod.id, uid: pod.uid, name: 'web', namespace: 'default' });
  await p.waitForLog(/"why":"StopPodSandbox".*nri: pod no longer watched/);
  rewrite();
  await sleep(500);
  t.equal(owner(), 0, 'after StopPodSandbox a rewrite is left alone');

  const lines = p
    .log()
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  const watcher = /^nri: (watching|synchronized owner|pod no longer)/;
  t.same(
    lines.filter((l) => watcher.test(String(l.msg))).map((l) => l.msg),
    ['nri: watching pod volume owners', 'nri: synchronized owner watches', 'nri: pod no longer watched'],
  );
  t.match(
    lines.find((l) => l.msg === 'nri: watching pod volume owners'),
    { podUid: 'pod-synced', pod: 'web', namespace: 'default', sandbox: 'sandbox-synced', volumes: 1, why: 'Synchronize' },
  );
  t.match(
    lines.find((l) => l.msg === 'nri: pod no longer watched'),
    { podUid: 'pod-synced', why: 'StopPodSandbox' },
  );
  t.notMatch(first.log() + p.log(), CANARY, 'no value logged');
});

t.test(
  'CreateContainer: a volume the container does not mount is left alone; one it mounts is copied, owned and watched once',
  async (t) => {
    const dir = t.testdir();
    const root = path.join(dir, 'kubelet');
    const rt = await startFakeRuntime();
    const p = startNriProcess(['--socket', rt.socketPath, '--kubelet-root', root], { dir });
    t.teardown(async () => {
      await p.stop();
      await rt.close();
    });
    const peer = await rt.nextPlugin();
    const pod = makePod(root, {}, 'pod-created');
    const vol = makeAtomicVolume(pod, 'secret', 'keys', { key: { data: CANARY, mode: 0o400 } });
    const owner = () => fs.lstatSync(path.join(vol, '..data/key')).uid;
    const annotations = { 'envhook.io/volumeOwners': OWNERS, other: CANARY };
    const init = await peer.createContainer(wire(nriRequest(pod, 'init', { annotations })));
    t.match(init, { adjust: { env: [] } }, 'owners only: no env to add');
    t.notOk((init.adjust as { mounts?: unknown[] } | undefined)?.mounts?.length, 'no mount replaced: it does not mount keys');
    t.equal(owner(), 0, "a container that does not mount the volume leaves the kubelet's files alone");
    const mounts = [...pod.mounts('app'), { destination: '/keys', source: vol, type: 'bind', options: ['rbind', 'ro'] }];
    const req = wire(nriRequest(pod, 'app', { annotations, mounts }));
    const res = await peer.createContainer(req);
    const copy = path.join(p.runDir, 'volumes', pod.uid, 'keys');
    t.match(res, { adjust: { mounts: [{ destination: '/keys', source: copy }] } }, "the container's /keys is the owned copy");
    const inCopy = () => `${fs.readFileSync(path.join(copy, 'key'), 'utf8')}:${fs.statSync(path.join(copy, 'key')).uid}`;
    t.equal(inCopy(), `${CANARY}:1000`, 'owned at CreateContainer');
    await p.waitForLog(/"why":"CreateContainer".*nri: watching pod volume owners/);
    for (let i = 0; i < 5; i++) {
      atomicWrite(vol, { key: { data: `${CANARY}${i}`, mode: 0o400 } });
      await waitFor(() => inCopy() === `${CANARY}${i}:1000`, 10_000, `rewrite ${i}`);
    }
    t.equal(owner(), 0, "the kubelet's files are left as it wrote them");
    const plain = makePod(root, {}, 'pod-plain');
    await peer.createContainer(wire(nriRequest(plain, 'app', { annotations: { 'envhook.io/env': JSON.stringify({ app: [] }) } })));
    await peer.createContainer(req); // a second start of the same container: no second watch
    await sleep(200);
    t.equal(
      p
        .log()
        .split('\n')
        .filter((l) => l.includes('nri: watching pod volume owners')).length,
      1,
      'one watch: the pod with owners, once',
    );
    t.notMatch(p.log(), CANARY);
  },
);

t.test(
  "owned copies counted as they happen: /metrics and envhook status show the copies held, each rewrite's update, a refused payload's failure",
  async (t) => {
    const dir = t.testdir();
    const root = path.join(dir, 'kubelet');
    const rt = await startFakeRuntime();
    const port = await freePort();
    const p = startNriProcess(['--socket', rt.socketPath, '--kubelet-root', root, '--metrics-address', `127.0.0.1:${port}`], { dir });
    t.teardown(async () => {
      await p.stop();
      await rt.close();
    });
    const peer = await rt.nextPlugin();
    const pod = makePod(root, {}, 'pod-copied');
    const vol = makeAtomicVolume(pod, 'secret', 'keys', { key: { data: `${CANARY}-0`, mode: 0o400 } });
    const mounts = [...pod.mounts('app'), { destination: '/keys', source: vol, type: 'bind', options: ['rbind', 'ro'] }];
    const res = await peer.createContainer(wire(nriRequest(pod, 'app', { annotations: { 'envhook.io/volumeOwners': OWNERS }, mounts })));
    const copy = path.join(p.runDir, 'volumes', pod.uid, 'keys');
    t.match(res, { adjust: { mounts: [{ destination: '/keys', source: copy }] } }, "the container's /keys is the owned copy");
    type Owners = {
      copies?: number;
      copyBytes?: number;
      copyFiles?: number;
      copyUpdates?: number;
      copyFailures?: number;
      copyLatency?: { count: number };
    };
    const owners = (s = p.status()) => (s?.owners ?? {}) as Owners;
    await p.waitForStatus((s) => owners(s).copies === 1);
    await p.waitForLog(/"why":"CreateContainer".*nri: watching pod volume owners/);
    await new Promise((r) => setTimeout(r, 300)); // the watch's first run (it finds the copy current)
    t.match(
      owners(),
      { copyUpdates: 0, copyLatency: { count: 0 } },
      "the copy CreateContainer made holds the kubelet's payload: no update, no latency",
    );
    const inCopy = () => fs.readFileSync(path.join(copy, 'key'), 'utf8');
    for (let i = 1; i <= 5; i++) {
      atomicWrite(vol, { key: { data: `${CANARY}-${i}`, mode: 0o400 } });
      await waitFor(() => inCopy() === `${CANARY}-${i}`, 10_000, `rewrite ${i} in the copy`);
    }
    await p.waitForStatus((s) => owners(s).copyUpdates === 5);
    // A payload the copy refuses (a hard link): counted, the copy keeps the last good payload.
    const outside = path.join(dir, 'outside');
    fs.writeFileSync(outside, 'x');
    atomicWrite(
      vol,
      { key: { data: `${CANARY}-6`, mode: 0o400 } },
      { beforeRename: (ts) => fs.linkSync(outside, path.join(ts, 'linked')) },
    );
    await p.waitForStatus((s) => owners(s).copyFailures === 1);
    t.equal(inCopy(), `${CANARY}-5`, 'the refused rewrite left the last good copy');
    atomicWrite(vol, { key: { data: `${CANARY}-7`, mode: 0o400 } });
    await waitFor(() => inCopy() === `${CANARY}-7`, 10_000, 'the next clean rewrite in the copy');
    const s = await p.waitForStatus((s) => owners(s).copyUpdates === 6);
    t.match(owners(s), { copies: 1, copyUpdates: 6, copyFailures: 1, copyLatency: { count: 6 } }, 'the status file');
    const held = `${CANARY}-7`.length; // the copy's one file, its bytes measured by the copier
    t.match(owners(s), { copyBytes: held, copyFiles: 1 }, 'the status file: what the copies hold');

    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    t.match(metrics, /^envhook_owner_copies 1$/m, '/metrics: one copy held');
    t.match(metrics, new RegExp(`^envhook_owner_copy_bytes ${held}$`, 'm'), '/metrics: its bytes');
    t.match(metrics, /^envhook_owner_copy_files 1$/m, '/metrics: its files');
    t.notMatch(metrics, CANARY, 'no content in the metrics');
    t.match(metrics, new RegExp(`^envhook_owner_copy_updates_total 6$`, 'm'), '/metrics: every clean rewrite an update');
    t.match(metrics, /^envhook_owner_copy_failures_total 1$/m, '/metrics: the refused one a failure');
    t.match(metrics, new RegExp(`^envhook_owner_copy_update_latency_seconds_count 6$`, 'm'), '/metrics: one latency each');
    const st = envhook(['status', '--root', '/', '--prefix', path.join(dir, 'none'), '--run-dir', p.runDir]);
    t.match(
      st.stdout,
      new RegExp(
        `^  owned copies: 1 volumes \\(${held} bytes in 1 files\\), 6 updates, [\\d.]+ ms after the kubelet's swap on average, 1 failed$`,
        'm',
      ),
      'envhook status: the same counts',
    );

    await peer.stateChange(EVENT_STOP_POD_SANDBOX, {
      id: `sandbox-${pod.uid.slice(0, 8)}`,
      uid: pod.uid,
      name: 'web',
      namespace: 'default',
    });
    await p.waitForStatus((s) => owners(s).copies === 0);
    t.notOk(fs.existsSync(copy), 'the pod ended: its copy removed, none held');
    t.match(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text(), /^envhook_owner_copies 0$/m);
    await p.waitForStatus((s) => owners(s).copyBytes === 0 && owners(s).copyFiles === 0);
    t.pass('the removal job measured the copies again: none held');
    t.notMatch(p.log() + st.stdout + metrics, CANARY, 'no file content in the log, status or metrics');
  },
);
