// A rollout of the NRI DaemonSet on a real containerd over CRI, while annotated pods are created
// every INTERVAL_MS (nri-churn.ts): the "old" envhook nri hands over to the "new" one exactly as
// the DaemonSet runs them, two processes with the same mounts (socket, kubelet root, run
// directory), the same metrics address (the host network's) and each its own ENVHOOK_POD_UID:
// - maxSurge 1, maxUnavailable 0: the new pod starts beside the old one, and the old one gets
//   SIGTERM as soon as the new pod is Ready, i.e. as soon as the readiness probe (GET /readyz on
//   the shared address, every second from the container's start, as the kubelet does) says 200.
//   That can be the old instance's own answer, before the new one even dialled: the old one goes
//   on serving (--handover-wait) until the new one has taken over;
// - the kubelet restarts the old pod's container after it handed over: it stays out;
// - maxSurge 0: the old pod is SIGTERMed first and the new one starts only once it has exited
//   (the DaemonSet controller creates no pod while the old one terminates).
// Counted per order: containers created meanwhile, without their env, CreateContainer failures.
import t, { type Test } from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { missingForCri, prepareCriContainerd, type CriContainerd } from '../helpers/cri/containerd.ts';
import { startChurn, type Churn, type ChurnContainer } from '../helpers/nri/churn.ts';
import { alive, freePort, startNriProcess, type NriProcess } from '../helpers/nri/process.ts';
import { sleep, waitFor } from '../helpers/wait.ts';

/** A new pod every INTERVAL_MS (the churn's gaps say what the machine managed). */
const INTERVAL_MS = 35;
/** The example's and the chart's --handover-wait for the surge order; the maxSurge 0 order waits in vain, so less here. */
const SURGE_WAIT = '20';
const NO_SURGE_WAIT = '3';

interface Node {
  c: CriContainerd;
  kubeletRoot: string;
  runDir: string;
  address: string;
  dir: string;
}

/** One DaemonSet pod's envhook nri: its pod UID (the downward API's) and pod directory, the node's mounts. */
function daemonPod(n: Node, uid: string, wait: string): NriProcess {
  fs.mkdirSync(path.join(n.kubeletRoot, 'pods', uid), { recursive: true });
  return startNriProcess(
    [
      '--socket',
      n.c.paths.nriSocket,
      '--kubelet-root',
      n.kubeletRoot,
      '--metrics-address',
      n.address,
      '--handover-wait',
      wait,
      '--log-level',
      'info',
    ],
    { dir: n.dir, runDir: n.runDir, env: { ENVHOOK_POD_UID: uid }, logToStderr: true },
  );
}

const registrations = (p: NriProcess): number => p.log().match(/"msg":"nri: registered"/g)?.length ?? 0;

async function readyz(address: string): Promise<number> {
  try {
    return (await fetch(`http://${address}/readyz`, { signal: AbortSignal.timeout(1000) })).status;
  } catch {
    return 0;
  }
}

/** The kubelet's readiness probe of a pod started now: every second, until 200. */
async function untilReady(address: string): Promise<number> {
  for (;;) {
    if ((await readyz(address)) === 200) return Date.now();
    await sleep(1000);
  }
}

interface Window {
  created: number;
  withoutEnv: ChurnContainer[];
  failed: ChurnContainer[];
}

/** Containers whose CreateContainer was sent in [from, to], once each of them is classified. */
async function windowOf(churn: Churn, from: number, to: number): Promise<Window> {
  const sent = (k: ChurnContainer) => k.created !== undefined && k.created[0] >= from && k.created[0] <= to;
  await waitFor(() => churn.containers.every((k) => !sent(k) || k.done), 60_000, 'the containers of the window classified', 50);
  const ks = churn.containers.filter(sent);
  return { created: ks.length, withoutEnv: ks.filter((k) => k.env === false), failed: ks.filter((k) => k.error !== undefined) };
}

/** Waits until the churn has sent `n` CreateContainers since now: pods are being created when the hand-over starts. */
async function flowing(churn: Churn, n: number): Promise<void> {
  const since = Date.now();
  await waitFor(() => churn.containers.filter((k) => k.created && k.created[0] >= since).length >= n, 120_000, 'the churn flowing', 50);
}

let held = false;

const figure = (w: Window): string => `${w.created} created, ${w.withoutEnv.length} without env, ${w.failed.length} failed`;

export function handoverSuite(version: '1.7' | '2.1'): void {
  t.test(`containerd ${version}: a DaemonSet rollout under pod churn`, { skip: missingForCri(version) }, async (t) => {
    const c = prepareCriContainerd({ version, nri: true });
    t.teardown(() => c.stop());
    t.comment(c.label);
    const dir = t.testdir();
    const n: Node = {
      c,
      dir,
      kubeletRoot: path.join(c.dir, 'kubelet'),
      runDir: path.join(c.dir, 'run-envhook'),
      address: `127.0.0.1:${await freePort()}`,
    };
    fs.mkdirSync(n.kubeletRoot);
    await c.start();
    const old = daemonPod(n, 'pod-a', SURGE_WAIT);
    t.teardown(() => old.stop());
    await old.waitForLog(/"msg":"nri: registered"/);
    await old.waitForLog(/"msg":"nri: metrics and health endpoint listening"/);
    const churn = startChurn(c, n.kubeletRoot, { intervalMs: INTERVAL_MS, cap: 32 });
    // Pods are removed 1 s after their create, except while held: the containers of the maxSurge 0
    // window must still run at the new instance's Synchronize, which reports them.
    const release = setInterval(() => held || churn.advance(Date.now() - 1000), 250);
    t.teardown(() => clearInterval(release));
    try {
      await surge(t, n, churn, old);
      await noSurge(t, n, churn);
    } finally {
      clearInterval(release);
      await churn.stop();
    }
    const gaps = churn.gaps().sort((a, b) => a - b);
    t.comment(`churn: ${churn.containers.length} pods, launch gap p50 ${gaps[Math.floor(gaps.length / 2)]} ms`);
    t.same(
      churn.containers.filter((k) => k.error).map((k) => `${k.name}: ${k.error}`),
      [],
      'no CreateContainer (or any CRI call of the churn) failed, in either order',
    );
    t.notOk(fs.existsSync(path.join(n.runDir, 'nri-claims')), 'no claim left once one instance serves alone');
  });
}

/** maxSurge 1: the new pod beside the old; the old SIGTERMed when the probe first says Ready; then the old's container restarted. */
async function surge(t: Test, n: Node, churn: Churn, old: NriProcess): Promise<void> {
  await flowing(churn, 3);
  const from = Date.now();
  const next = daemonPod(n, 'pod-b', NO_SURGE_WAIT);
  t.teardown(() => next.stop());
  const readyAt = await untilReady(n.address);
  old.child.kill('SIGTERM');
  t.equal(await old.exited, 0, 'the old instance exits 0 after SIGTERM');
  t.match(old.log(), /"msg":"nri: handed over"/, 'the old one handed over');
  await next.waitForLog(/"yielded":true,"msg":"nri: took over from the envhook nri that was running"/);
  const tookOver = Date.now();
  await waitFor(async () => (await readyz(n.address)) === 200, 10_000, "the new instance's /readyz", 100);
  t.match(
    next.log(),
    /"msg":"nri: metrics and health endpoint listening"/,
    "/readyz: 200, the new instance's own, bound after the hand-over",
  );
  await sleep(2000);
  const w = await windowOf(churn, from, Date.now());
  t.comment(
    `maxSurge 1: probe Ready ${readyAt - from} ms after the new pod's start, took over ${tookOver - from} ms after it; ${figure(w)}`,
  );
  t.ok(w.created > 0, 'containers were created during the hand-over');
  t.same(
    w.withoutEnv.map((k) => k.id),
    [],
    'maxSurge 1: no container without its env',
  );
  t.same(
    w.failed.map((k) => k.error),
    [],
    'maxSurge 1: no CreateContainer failure',
  );
  t.equal(registrations(old), 1, 'the old instance registered once');
  t.equal(registrations(next), 1, 'the new instance registered once');

  // The kubelet restarts the old pod's container (it crashed after it handed over): it stays out.
  const again = daemonPod(n, 'pod-a', SURGE_WAIT);
  await again.waitForLog(/"msg":"nri: this pod handed over before: it does not register again"/);
  await sleep(1500);
  t.equal(registrations(again), 0, "the old pod's restarted container does not register");
  t.match(next.status(), { pid: next.child.pid, connected: true }, 'the new instance still holds the registration');
  t.equal(await again.stop(), 0, 'SIGTERM: the restarted one exits 0');
  t.ok(alive(next.child.pid!), 'the new instance runs');
  nextOfSurge = next;
}

let nextOfSurge: NriProcess | undefined;

/** maxSurge 0: the running instance SIGTERMed first; the new pod starts once it has exited. */
async function noSurge(t: Test, n: Node, churn: Churn): Promise<void> {
  const running = nextOfSurge!;
  await flowing(churn, 3);
  const from = Date.now();
  held = true;
  running.child.kill('SIGTERM');
  t.equal(await running.exited, 0, 'the running instance exits 0 once its hand-over wait is over');
  const third = daemonPod(n, 'pod-c', NO_SURGE_WAIT);
  t.teardown(() => third.stop());
  await third.waitForLog(/"msg":"nri: registered"/);
  const registeredAt = Date.now();
  await sleep(2000);
  const w = await windowOf(churn, from, Date.now());
  t.comment(`maxSurge 0: registered ${registeredAt - from} ms after the old pod's SIGTERM; ${figure(w)}`);
  t.same(
    w.failed.map((k) => k.error),
    [],
    'maxSurge 0: no CreateContainer failure (NRI fails open)',
  );
  // The window: each container created without its env is reported by the new instance.
  await waitFor(() => (third.status()?.counts.missed ?? 0) >= w.withoutEnv.length, 20_000, 'missed reported', 50);
  t.equal(third.status()?.counts.missed, w.withoutEnv.length, 'maxSurge 0: every container created in the window reported missed');
  held = false;
}
