// Owned copies through the resident NRI plugin on a real containerd (2.1.9 or 1.7.24), driven
// over CRI as the kubelet drives it, at envhook's default settings (ordinary priority): a pod
// whose secret volume and projected volume (a token, a CA bundle, a namespace file, every file
// 0400) have `envhook.io/volumeOwners` defaultUser 1000, and a container running as UID 1000
// that reads those files in a loop (test/helpers/watch/volume-reader.ts) while the test rewrites both
// volumes with the kubelet's atomic-writer operations, quiet and then with both CPUs busy. What
// is checked is the container's own view (/proc/<pid>/root/…, /proc/<pid>/mountinfo): its
// mounts point at envhook's copies with the kubelet's options kept, each rewrite's content
// reaches it owned by 1000 within 2 s, the reader never gets EACCES (at most 1 in 10,000), and
// the kubelet's files stay root's. Then the plugin restarts (the copies are followed again),
// and the pod's removal removes the copies. ENVHOOK_WATCH_REWRITES sets the rewrites a phase (default 200).
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
import { runPod } from '../helpers/cri/pod.ts';
import { startNriProcess, type NriProcess } from '../helpers/nri/process.ts';
import { waitFor } from '../helpers/wait.ts';
import { churnWithReader, describeReader, readerScript } from '../helpers/watch/volume-reader.ts';
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
async function startPlugin(t: Test, c: CriContainerd, kubeletRoot: string, dir: string): Promise<NriProcess> {
  const from = fs.readFileSync(c.paths.log, 'utf8').length;
  const env = { ENVHOOK_RUN_DIR: path.join(dir, 'run') };
  const p = startNriProcess(['--socket', c.paths.nriSocket, '--kubelet-root', kubeletRoot], { dir, env });
  t.teardown(() => p.stop());
  await waitFor(() => NRI_CONNECTED.test(fs.readFileSync(c.paths.log, 'utf8').slice(from)), 60_000, 'containerd: plugin connected');
  return p;
}

/** The container's mount at `destination` from its mountinfo: root (the source's path in its file system) and options. */
function mountOf(pid: number, destination: string): { root: string; options: string } | undefined {
  for (const line of fs.readFileSync(`/proc/${pid}/mountinfo`, 'utf8').split('\n')) {
    const f = line.split(' ');
    if (f[4] === destination) return { root: f[3]!, options: f[5]! };
  }
  return undefined;
}

export function copyNriSuite(version: ContainerdVersion): void {
  t.test(
    `containerd ${version} + envhook nri: UID 1000 reads owned copies of a secret and a projected volume while both are rewritten ${REWRITES} times, quiet then busy`,
    { skip: missingForCri(version) },
    async (t) => {
      const dir = t.testdir();
      const c = prepareCriContainerd({ version, nri: true });
      t.comment(c.label);
      let stopped = false;
      t.teardown(async () => {
        if (!stopped) await c.stop();
      });
      await c.start();
      const kubeletRoot = path.join(c.dir, 'kubelet');
      let plugin = await startPlugin(t, c, kubeletRoot, dir);
      const owners = [
        { volume: 'keys', defaultUser: 1000 },
        { volume: 'kube-api-access', defaultUser: 1000 },
      ];
      const pod = await runPod(c, kubeletRoot, {
        name: `copy-nri-${process.pid}`,
        handler: '',
        annotations: { 'envhook.io/volumeOwners': JSON.stringify(owners) },
        secrets: { keys: secret(0) },
        projected: { 'kube-api-access': projected(0) },
        emptyDirs: { ctl: {} },
      });
      const vol = atomicVolumeDir(pod.pod, 'secret', 'keys');
      const sa = atomicVolumeDir(pod.pod, 'projected', 'kube-api-access');
      const ctl = pod.pod.emptyDir('ctl');
      fs.chmodSync(ctl, 0o777);
      const copies = path.join(dir, 'run', 'volumes', pod.uid);
      const mounts = { keys: '/keys', 'kube-api-access': SA, ctl: '/ctl' };
      const pids: number[] = [];
      const reader = async (phase: string) => {
        const id = await pod.run({
          name: `reader-${phase}`,
          command: ['sh', '-c', `${readerScript(FILES, phase)}; sleep 3600`],
          volumeMounts: mounts,
          user: 1000,
        });
        pids.push(await pod.pid(id));
        return id;
      };
      const id = await reader('quiet');
      const pid = pids[0]!;
      await t.test("the container's view", async (t) => {
        const keys = mountOf(pid, '/keys');
        t.match(keys?.root, new RegExp(`/volumes/${pod.uid}/keys$`), `/keys is a mount of envhook's copy (${keys?.root})`);
        t.match(keys?.options, /^ro[,$]/, "the kubelet's read-only option kept");
        t.match(mountOf(pid, SA)?.root, new RegExp(`/volumes/${pod.uid}/kube-api-access$`), 'and the projected volume');
        t.match(mountOf(pid, '/ctl')?.root, /empty-dir\/ctl$/, 'the emptyDir is left alone');
        const inside = (f: string) => fs.statSync(`/proc/${pid}/root${f}`);
        for (const f of FILES) t.equal(inside(f).uid, 1000, `${f} is owned by 1000 inside the container`);
        t.equal(inside('/keys/key').mode & 0o777, 0o400, "the kubelet's mode");
        t.equal(fs.readFileSync(`/proc/${pid}/root/keys/key`, 'utf8'), `${CANARY}-0\n`);
        t.equal(fs.lstatSync(path.join(vol, '..data/key')).uid, 0, "the kubelet's file is left root's");
        t.equal(fs.statSync(path.dirname(copies)).mode & 0o777, 0o700, 'the copies are root-only above each copy');
      });

      let n = 0;
      const rewrite = (i: number) => {
        atomicWrite(vol, secret(i));
        atomicWrite(sa, projected(i));
      };
      // The newest rewrite's content, owned, in the view of every reader started so far.
      const owned = () =>
        pids.every((p) => {
          const file = `/proc/${p}/root/keys/key`;
          const tok = `/proc/${p}/root${SA}/token`;
          return (
            fs.readFileSync(file, 'utf8') === `${CANARY}-${n}\n` &&
            fs.statSync(file).uid === 1000 &&
            fs.readFileSync(tok, 'utf8') === `${CANARY}-token-${n}\n` &&
            fs.statSync(tok).uid === 1000
          );
        });
      for (const busy of [false, true]) {
        const phase = busy ? 'busy' : 'quiet';
        if (busy) await reader(phase);
        const r = await churnWithReader({ ctl, phase, rewrites: REWRITES, busy, rewrite: () => rewrite(++n), owned, ownedWithinMs: 2000 });
        t.comment(describeReader(`copy-nri ${version} ${phase} (${REWRITES} rewrites of both volumes)`, r, FILES));
        const reads = r.ok + r.fail;
        t.equal(r.neverOwned, 0, `${phase}: every rewrite's content reached the container's view owned by 1000 within 2 s`);
        t.ok(r.fail * 10_000 <= reads, `${phase}: at most 1 EACCES in 10,000 reads (${r.fail} in ${reads})`);
        t.equal(r.uid, 1000, `${phase}: the reader ran as UID 1000`);
        t.ok(r.ok > 0 && r.afterOk > 0 && r.afterFail === 0, `${phase}: it read during and after the churn`);
      }
      t.equal(fs.lstatSync(path.join(vol, '..data/key')).uid, 0, "after every rewrite the kubelet's files are still root's");
      t.equal((await pod.status(id)).state, 1, 'the container still runs');

      // The plugin restarts while the pod runs: the copies are followed again.
      t.equal(await plugin.stop(), 0, 'the plugin exits 0 on SIGTERM');
      plugin = await startPlugin(t, c, kubeletRoot, dir);
      atomicWrite(vol, secret(++n));
      atomicWrite(sa, projected(n));
      await waitFor(owned, 10_000, 'a rewrite after the plugin restarted reaches the containers owned');
      t.pass('a rewrite after the plugin restarted reaches the containers owned');

      await pod.remove();
      await waitFor(() => !fs.existsSync(copies), 10_000, "the pod's copies removed").catch(() => {});
      if (fs.existsSync(copies)) {
        // No StopPodSandbox (a runtime that sends none for this pod): the copies go with the pod directory.
        fs.rmSync(pod.pod.dir, { recursive: true, force: true });
        await waitFor(() => !fs.existsSync(copies), 5000, "the pod's copies removed with its directory, at its event");
      }
      t.pass("the pod's copies are removed with the pod");
      t.notMatch(plugin.log(), CANARY, 'no file content in the log');
      t.equal(await plugin.stop(), 0);
      stopped = true;
      t.same(await c.stop(), { processes: [], mounts: [] }, 'teardown leaves no process, mount or shim');
    },
  );
}
