// Owners that survive the kubelet, through the resident NRI plugin on a real containerd 2.1.9
// (Debian sid, NRI 0.8.0) driven over CRI as the kubelet drives it: `envhook nri --socket ...`
// registered with containerd, a pod with no runtimeClassName whose secret volume (the kubelet's
// atomic-writer layout) has `envhook.io/volumeOwners` defaultUser 1000, and a container running
// as UID 1000 that reads the volume's 0400 file in a loop while the test rewrites the volume
// with the atomic-writer double. Every rewrite must end owned by 1000; the reader's failures
// during the churn are counted and reported (timing-dependent: not asserted to be zero), and
// every read after it must succeed. Then the daemon is restarted while the pod runs: the
// watches come back from containerd's own Synchronize; the pod's removal ends them.
import t, { type Test } from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { missingForCri, NRI_CONNECTED, prepareCriContainerd, type CriContainerd } from '../helpers/cri-containerd.ts';
import { runPod } from '../helpers/cri-pod.ts';
import { startNriProcess, type NriProcess } from '../helpers/nri-process.ts';
import { waitFor } from '../helpers/inotify.ts';
import { atomicVolumeDir, atomicWrite } from '../../scripts/kubelet-pod.ts';

t.setTimeout(600_000);
const REWRITES = Number(process.env.ENVHOOK_WATCH_REWRITES) || 1000;
const INTERVAL_MS = 10; // about 100 rewrites a second (less when a rewrite waits for its owner)
const CANARY = 'CANARY-watch-nri-2c7d';
// `read` is a shell builtin: one open(2) a read, no fork. Two phases: during the churn, then
// after it (the test creates /ctl/settled, then /ctl/stop); the counts go to /ctl/result.
const LOOP = (until: string, v: string) => `while [ ! -e /ctl/${until} ]; do if read -r l < /keys/key; then ${v}ok=$((${v}ok+1)); else ${v}fail=$((${v}fail+1)); fi; done`;
const READER = `ok=0; fail=0; lok=0; lfail=0; : > /ctl/started; { ${LOOP('settled', '')}; ${LOOP('stop', 'l')}; } 2>/dev/null; echo "ok=$ok fail=$fail after: ok=$lok fail=$lfail uid=$(id -u)" > /ctl/result; sleep 3600`;

async function startPlugin(t: Test, c: CriContainerd, kubeletRoot: string, dir: string): Promise<NriProcess> {
  const from = fs.readFileSync(c.paths.log, 'utf8').length;
  const p = startNriProcess(['--socket', c.paths.nriSocket, '--kubelet-root', kubeletRoot], { dir });
  t.teardown(() => p.stop());
  await waitFor(() => NRI_CONNECTED.test(fs.readFileSync(c.paths.log, 'utf8').slice(from)), 60_000, 'containerd: plugin connected');
  return p;
}

t.test(`containerd 2.1 + envhook nri: UID 1000 reads a 0400 secret while the volume is rewritten ${REWRITES} times`, { skip: missingForCri('2.1') }, async (t) => {
  const dir = t.testdir();
  const c = prepareCriContainerd({ version: '2.1', nri: true });
  let stopped = false;
  t.teardown(async () => {
    if (!stopped) await c.stop();
  });
  await c.start();
  const kubeletRoot = path.join(c.dir, 'kubelet');
  let plugin = await startPlugin(t, c, kubeletRoot, dir);

  const owners = [{ volume: 'keys', defaultUser: 1000 }];
  const pod = await runPod(c, kubeletRoot, {
    name: `watch-nri-${process.pid}`,
    handler: '', // no runtimeClassName: containerd's default runtime, NRI does the work
    annotations: { 'envhook.io/volumeOwners': JSON.stringify(owners) },
    secrets: { keys: { key: { data: `${CANARY}-0\n`, mode: 0o400 } } },
    emptyDirs: { ctl: {} },
  });
  const vol = atomicVolumeDir(pod.pod, 'secret', 'keys');
  const ctl = pod.pod.emptyDir('ctl');
  fs.chmodSync(ctl, 0o777); // the reader (UID 1000) writes its marks and counts there
  const owner = () => fs.lstatSync(path.join(vol, '..data/key')).uid;
  t.equal(owner(), 0, 'the kubelet wrote the file as root');
  const id = await pod.run({ name: 'reader', command: ['sh', '-c', READER], volumeMounts: { keys: '/keys', ctl: '/ctl' }, user: 1000 });
  t.equal(owner(), 1000, 'CreateContainer through NRI chowned the file');
  await waitFor(() => fs.existsSync(path.join(ctl, 'started')), 60_000, 'reader up');
  await plugin.waitForLog(/"why":"CreateContainer".*nri: watching pod volume owners/, 10_000);

  // The churn: every rewrite must end owned by 1000 (waited for when the watcher is behind).
  let waited = 0;
  let neverOwned = 0;
  const started = Date.now();
  for (let i = 1; i <= REWRITES; i++) {
    atomicWrite(vol, { key: { data: `${CANARY}-${i}\n`, mode: 0o400 } });
    await new Promise((r) => setTimeout(r, INTERVAL_MS));
    if (owner() === 1000) continue;
    waited++;
    await waitFor(() => owner() === 1000, 5000, `rewrite ${i} owned`).catch(() => neverOwned++);
  }
  const seconds = (Date.now() - started) / 1000;
  t.equal(neverOwned, 0, `every one of ${REWRITES} rewrites ended owned by 1000 (${waited} not yet owned ${INTERVAL_MS} ms after the rename)`);
  await new Promise((r) => setTimeout(r, 200));
  fs.writeFileSync(path.join(ctl, 'settled'), '');
  await new Promise((r) => setTimeout(r, 500));
  fs.writeFileSync(path.join(ctl, 'stop'), '');
  await waitFor(() => fs.existsSync(path.join(ctl, 'result')) && fs.readFileSync(path.join(ctl, 'result'), 'utf8').includes('uid='), 30_000, 'reader result');
  const result = fs.readFileSync(path.join(ctl, 'result'), 'utf8');
  const m = /ok=(\d+) fail=(\d+) after: ok=(\d+) fail=(\d+) uid=(\d+)/.exec(result);
  if (!t.ok(m, `the reader reported its counts: ${result.trim()}`)) return;
  const [ok, fail, afterOk, afterFail, uid] = m!.slice(1).map(Number) as [number, number, number, number, number];
  t.equal(uid, 1000, 'the reader ran as UID 1000');
  t.ok(ok > 0, 'it read during the churn');
  t.comment(`watch-nri: ${REWRITES} rewrites in ${seconds.toFixed(1)} s; reader during the churn: ${ok} ok, ${fail} failed (${((100 * fail) / (ok + fail)).toFixed(2)}%); after it: ${afterOk} ok, ${afterFail} failed; ${waited} rewrites not yet owned ${INTERVAL_MS} ms after the rename`);
  t.ok(afterOk > 0, 'after the churn the reader reads');
  t.equal(afterFail, 0, 'and never fails');
  t.equal((await pod.status(id)).state, 1, 'the container still runs');

  // The daemon restarts while the pod runs: nobody watches, then containerd's Synchronize restores it.
  t.equal(await plugin.stop(), 0, 'the plugin exits 0 on SIGTERM');
  atomicWrite(vol, { key: { data: `${CANARY}-gap\n`, mode: 0o400 } });
  t.equal(owner(), 0, 'a rewrite while no plugin runs is root-owned');
  plugin = await startPlugin(t, c, kubeletRoot, dir);
  await waitFor(() => owner() === 1000, 10_000, 'owned again after the restart');
  t.match(plugin.log(), /"why":"Synchronize".*nri: watching pod volume owners/, 'restored from Synchronize');
  t.match(plugin.log(), /"runtimePods":1,"containers":1,"watchedPods":1,"volumes":1/, "containerd's Synchronize: one pod, one running container");
  atomicWrite(vol, { key: { data: `${CANARY}-after\n`, mode: 0o400 } });
  await waitFor(() => owner() === 1000, 10_000, 'a rewrite after the restart owned');

  // The pod goes: StopPodSandbox ends the watch.
  await pod.remove();
  await plugin.waitForLog(/"why":"StopPodSandbox".*nri: pod no longer watched/, 10_000);
  t.notMatch(plugin.log(), CANARY, 'no file content in the log');
  t.equal(await plugin.stop(), 0);
  stopped = true;
  t.same(await c.stop(), { processes: [], mounts: [] }, 'teardown leaves no process, mount or shim');
});
