// Owned copies through a resident envhook on a real containerd, driven over CRI as the kubelet
// drives it, at envhook's default settings (ordinary priority): the NRI plugin (`envhook nri`)
// on containerd 2.1.9 or 1.7.24, or the runtime shim (the `envhook` runtime handler that the
// real `envhook install` registers, real runc behind it) with `envhook watch` on containerd 1.6.
// A pod whose secret volume and projected volume (a token, a CA bundle, a namespace file, every
// file 0400) have `envhook.io/volumeOwners` defaultUser 1000, and a container running as UID
// 1000 that reads those files in a loop (test/helpers/watch/volume-reader.ts) while the test rewrites
// both volumes with the kubelet's atomic-writer operations, quiet and then with both CPUs busy.
// What is checked is the container's own view (/proc/<pid>/root/…, /proc/<pid>/mountinfo): its
// mounts point at envhook's copies with the kubelet's options kept, each rewrite's content
// reaches it owned by 1000 within 2 s, no read fails (neither EACCES nor ENOENT), and
// the kubelet's files stay root's. Then the resident process restarts (the copies are followed
// again), and the pod's removal removes the copies. ENVHOOK_WATCH_REWRITES sets the rewrites a
// phase (default 200).
import t, { type Test } from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import {
  missingForCri,
  NRI_CONNECTED,
  prepareCriContainerd,
  type ContainerdVersion,
  type CriContainerd,
} from '../helpers/cri/containerd.ts';
import { prepareWithEnvhook } from '../helpers/cri/envhook.ts';
import { spawnEnvhook } from '../helpers/bundle.ts';
import { runPod } from '../helpers/cri/pod.ts';
import { startNriProcess } from '../helpers/nri/process.ts';
import { churnWithReader, describeReader, readerScript } from '../helpers/watch/volume-reader.ts';
import { waitFor } from '../helpers/wait.ts';
import { atomicVolumeDir, atomicWrite } from '../../scripts/kubelet-pod.ts';

const REWRITES = Number(process.env.ENVHOOK_WATCH_REWRITES) || 200;
const CANARY = 'CANARY-copy-nri-5e1a';
const SA = '/var/run/secrets/kubernetes.io/serviceaccount';
const FILES = ['/keys/key', `${SA}/token`, `${SA}/ca.crt`, `${SA}/namespace`];
const secret = (i: number | string) => ({ key: { data: `${CANARY}-${i}\n`, mode: 0o400 } });
const projected = (i: number | string) => ({
  token: { data: `${CANARY}-token-${i}\n`, mode: 0o400 },
  'ca.crt': { data: `${CANARY}-ca-${i}\n`, mode: 0o400 },
  namespace: { data: 'default\n', mode: 0o400 },
});

/** The plugin as an admin runs it, its run directory (the copies) the same across restarts. */
async function startPlugin(t: Test, c: CriContainerd, kubeletRoot: string, dir: string): Promise<Resident> {
  const from = fs.readFileSync(c.paths.log, 'utf8').length;
  const env = { ENVHOOK_RUN_DIR: path.join(dir, 'run') };
  const p = startNriProcess(['--socket', c.paths.nriSocket, '--kubelet-root', kubeletRoot], { dir, env });
  t.teardown(() => p.stop());
  await waitFor(() => NRI_CONNECTED.test(fs.readFileSync(c.paths.log, 'utf8').slice(from)), 60_000, 'containerd: plugin connected');
  return p;
}

/** The resident envhook of the test: started, stopped (its exit status), its log. */
interface Resident {
  stop(): Promise<number | string | null>;
  log(): string;
}

/** `envhook watch` as an admin runs it on a shim node, on the run directory the shim writes. */
async function startWatch(t: Test, runDir: string, kubeletRoot: string, logFile: string): Promise<Resident> {
  const from = fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8').length : 0;
  const w = spawnEnvhook(['watch', '--run-dir', runDir, '--kubelet-root', kubeletRoot, '--log-file', logFile]);
  const exited = new Promise<number | string | null>((r) => w.on('exit', (code, signal) => r(code ?? signal)));
  t.teardown(() => w.kill('SIGKILL'));
  const log = () => (fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8') : '');
  await waitFor(() => log().slice(from).includes('watching owners records'), 20_000, 'envhook watch up');
  return {
    stop: () => (w.kill('SIGTERM'), exited),
    log,
  };
}

/** The container's mount at `destination` from its mountinfo: root (the source's path in its file system) and options. */
function mountOf(pid: number, destination: string): { root: string; options: string } | undefined {
  for (const line of fs.readFileSync(`/proc/${pid}/mountinfo`, 'utf8').split('\n')) {
    const f = line.split(' ');
    if (f[4] === destination) return { root: f[3]!, options: f[5]! };
  }
  return undefined;
}

/** Where the suite runs: NRI on containerd 2.1.9 or 1.7.24, or the runtime shim with `envhook watch` on containerd 1.6. */
export type CopyMode = { via: 'nri'; version: Exclude<ContainerdVersion, '1.6'> } | { via: 'shim'; version: '1.6' };

interface Node {
  c: CriContainerd;
  /** containerd stopped once (the test's last step, or its teardown): what it left behind. */
  stop(): ReturnType<CriContainerd['stop']>;
  kubeletRoot: string;
  runDir: string;
  /** The pod's runtime handler: '' (NRI, the default runc) or envhook's. */
  handler: string;
  startResident(): Promise<Resident>;
  /** The resident process's name in the test's lines. */
  resident: string;
}

/** containerd started with envhook as the mode has it (not the resident process yet). */
async function prepareNode(t: Test, mode: CopyMode, dir: string): Promise<Node> {
  if (mode.via === 'nri') {
    const c = prepareCriContainerd({ version: mode.version, nri: true });
    const stop = once(c);
    t.teardown(stop);
    await c.start();
    const kubeletRoot = path.join(c.dir, 'kubelet');
    const runDir = path.join(dir, 'run');
    return { c, stop, kubeletRoot, runDir, handler: '', resident: 'the plugin', startResident: () => startPlugin(t, c, kubeletRoot, dir) };
  }
  const node = prepareWithEnvhook({ version: mode.version, logLevel: 'info' });
  const c = node.containerd;
  const stop = once(c);
  t.teardown(stop);
  await c.start();
  // The run directory of envhook's settings (cri-envhook.ts): the shim writes the copies and records there.
  const runDir = path.join(c.dir, 'run');
  const watchLog = path.join(dir, 'watch.log');
  const startResident = () => startWatch(t, runDir, node.kubeletRoot, watchLog);
  return { c, stop, kubeletRoot: node.kubeletRoot, runDir, handler: 'envhook', resident: 'envhook watch', startResident };
}

function once(c: CriContainerd): Node['stop'] {
  let stopped: ReturnType<CriContainerd['stop']> | undefined;
  return () => (stopped ??= c.stop());
}

/** What the container sees at its start: its mounts are envhook's copies, owned, with the kubelet's options and mode. */
function checkView(t: Test, pid: number, p: { uid: string; vol: string; copies: string }): void {
  const keys = mountOf(pid, '/keys');
  t.match(keys?.root, new RegExp(`/volumes/${p.uid}/keys$`), `/keys is a mount of envhook's copy (${keys?.root})`);
  t.match(keys?.options, /^ro[,$]/, "the kubelet's read-only option kept");
  t.match(mountOf(pid, SA)?.root, new RegExp(`/volumes/${p.uid}/kube-api-access$`), 'and the projected volume');
  t.match(mountOf(pid, '/ctl')?.root, /empty-dir\/ctl$/, 'the emptyDir is left alone');
  const inside = (f: string) => fs.statSync(`/proc/${pid}/root${f}`);
  for (const f of FILES) t.equal(inside(f).uid, 1000, `${f} is owned by 1000 inside the container`);
  t.equal(inside('/keys/key').mode & 0o777, 0o400, "the kubelet's mode");
  t.equal(fs.readFileSync(`/proc/${pid}/root/keys/key`, 'utf8'), `${CANARY}-0\n`);
  t.equal(fs.lstatSync(path.join(p.vol, '..data/key')).uid, 0, "the kubelet's file is left root's");
  t.equal(fs.statSync(path.dirname(p.copies)).mode & 0o777, 0o700, 'the copies are root-only above each copy');
}

/** The newest rewrite's (`n()`) content, owned, in the view of every reader started so far. */
function ownedIn(pids: readonly number[], n: () => number): () => boolean {
  return () =>
    pids.every((p) => {
      const file = `/proc/${p}/root/keys/key`;
      const tok = `/proc/${p}/root${SA}/token`;
      return (
        fs.readFileSync(file, 'utf8') === `${CANARY}-${n()}\n` &&
        fs.statSync(file).uid === 1000 &&
        fs.readFileSync(tok, 'utf8') === `${CANARY}-token-${n()}\n` &&
        fs.statSync(tok).uid === 1000
      );
    });
}

export function copySuite(mode: CopyMode): void {
  const label = `containerd ${mode.version} + ${mode.via === 'nri' ? 'envhook nri' : 'the runtime shim and envhook watch'}`;
  t.test(
    `${label}: UID 1000 reads owned copies of a secret and a projected volume while both are rewritten ${REWRITES} times, quiet then busy`,
    { skip: missingForCri(mode.version) },
    async (t) => {
      const dir = t.testdir();
      const node = await prepareNode(t, mode, dir);
      t.comment(node.c.label);
      let resident = await node.startResident();
      const owners = [
        { volume: 'keys', defaultUser: 1000 },
        { volume: 'kube-api-access', defaultUser: 1000 },
      ];
      const pod = await runPod(node.c, node.kubeletRoot, {
        name: `copy-${mode.via}-${process.pid}`,
        handler: node.handler,
        annotations: { 'envhook.io/volumeOwners': JSON.stringify(owners) },
        secrets: { keys: secret(0) },
        projected: { 'kube-api-access': projected(0) },
        emptyDirs: { ctl: {} },
      });
      const vol = atomicVolumeDir(pod.pod, 'secret', 'keys');
      const sa = atomicVolumeDir(pod.pod, 'projected', 'kube-api-access');
      const ctl = pod.pod.emptyDir('ctl');
      fs.chmodSync(ctl, 0o777);
      const copies = path.join(node.runDir, 'volumes', pod.uid);
      const pids: number[] = [];
      const reader = async (phase: string) => {
        const command = ['sh', '-c', `${readerScript(FILES, phase, true)}; sleep 3600`];
        const id = await pod.run({
          name: `reader-${phase}`,
          command,
          volumeMounts: { keys: '/keys', 'kube-api-access': SA, ctl: '/ctl' },
          user: 1000,
        });
        pids.push(await pod.pid(id));
        return id;
      };
      const id = await reader('quiet');
      await t.test("the container's view", async (t) => checkView(t, pids[0]!, { uid: pod.uid, vol, copies }));

      let n = 0;
      const owned = ownedIn(pids, () => n);
      const rewrite = (i: number) => {
        atomicWrite(vol, secret(i));
        atomicWrite(sa, projected(i));
      };
      for (const busy of [false, true]) {
        const phase = busy ? 'busy' : 'quiet';
        if (busy) await reader(phase);
        // Each rewrite must reach the view, not be lost: a bound against a hang, not a latency
        // figure (bench row 12 measures how fast). At 2 s, 1 of 200 busy rewrites missed it once
        // on a clean clone with a light soak beside it.
        const r = await churnWithReader({ ctl, phase, rewrites: REWRITES, busy, rewrite: () => rewrite(++n), owned, ownedWithinMs: 5000 });
        t.comment(describeReader(`copy ${mode.via} ${mode.version} ${phase} (${REWRITES} rewrites of both volumes)`, r, FILES));
        t.equal(r.neverOwned, 0, `${phase}: every rewrite's content reached the container's view owned by 1000 within 5 s`);
        // The old payload or the new one, never neither: no EACCES (owned before visible), no ENOENT (the replaced payload is retired, not removed at once).
        t.same({ failed: r.fail, reasons: r.failReasons }, { failed: 0, reasons: {} }, `${phase}: no read failed in ${r.ok + r.fail}`);
        t.equal(r.uid, 1000, `${phase}: the reader ran as UID 1000`);
        t.ok(r.ok > 0 && r.afterOk > 0 && r.afterFail === 0, `${phase}: it read during and after the churn`);
      }
      t.equal(fs.lstatSync(path.join(vol, '..data/key')).uid, 0, "after every rewrite the kubelet's files are still root's");
      t.equal((await pod.status(id)).state, 1, 'the container still runs');

      // The resident process restarts while the pod runs: the copies are followed again.
      t.equal(await resident.stop(), 0, `${node.resident} exits 0 on SIGTERM`);
      const before = resident.log();
      resident = await node.startResident();
      rewrite(++n);
      await waitFor(owned, 10_000, `a rewrite after ${node.resident} restarted reaches the containers owned`).catch((err: Error) => {
        // seen once (containerd 1.7, CI): ENOENT reading /keys/key in a reader's view; what each process did with the copies
        const copyLines = (log: string) => log.split('\n').filter((l) => /cop(y|ies)|Synchroniz|registered|exit/.test(l));
        const view = (p: number) => fs.readdirSync(`/proc/${p}/root/keys`, { withFileTypes: true }).map((e) => e.name);
        throw new Error(
          `${err.message}\nviews: ${JSON.stringify(
            pids.map((p) => {
              try {
                return view(p);
              } catch (e) {
                return (e as Error).message;
              }
            }),
          )}` +
            `\ncopies: ${JSON.stringify(fs.existsSync(copies) ? fs.readdirSync(copies) : 'gone')}` +
            `\nbefore the restart:\n${copyLines(before).slice(-20).join('\n')}\nafter:\n${copyLines(resident.log()).join('\n')}`,
          { cause: err },
        );
      });
      t.pass(`a rewrite after ${node.resident} restarted reaches the containers owned`);
      await removePod(pod, copies);
      t.pass("the pod's copies are removed with the pod");
      t.notMatch(resident.log(), CANARY, 'no file content in the log');
      t.equal(await resident.stop(), 0);
      t.same(await node.stop(), { processes: [], mounts: [] }, 'teardown leaves no process, mount or shim');
    },
  );
}

/** The pod removed over CRI; where no StopPodSandbox reaches envhook (the shim, a runtime that sends none) the copies go with the pod directory. */
async function removePod(pod: { remove(): Promise<void>; pod: { dir: string } }, copies: string): Promise<void> {
  await pod.remove();
  await waitFor(() => !fs.existsSync(copies), 5000, "the pod's copies removed").catch(() => {});
  if (!fs.existsSync(copies)) return;
  fs.rmSync(pod.pod.dir, { recursive: true, force: true });
  // At the volume's own event (NRI), at envhook watch's rescan of the pod directories (every 5 s).
  await waitFor(() => !fs.existsSync(copies), 10_000, "the pod's copies removed with its directory");
}
