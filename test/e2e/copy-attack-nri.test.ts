// A hostile pod against `envhook nri` on a real containerd 2.1.9 over CRI, at default settings
// but for the budgets of owned copies, raised here (they refuse such a pod before its first copy:
// test/e2e/copy-budgets-nri.test.ts; this file is about the time the copies take): owned copies large
// enough to keep the plugin busy for seconds (one Secret-like volume of 4,000 files mounted four
// times, every volume with `envhook.io/volumeOwners`), while a victim pod in
// another namespace is created. Whatever the attacker holds, the victim's container starts with
// its env, the NRI worker is never killed for silence (the supervisor's 'worker not answering'),
// and the attacker gets its copies or one line saying why not. The same for a rewrite of such a
// volume under three containers, and for the removal of a pod with many such volumes.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { missingForCri, type CriContainerd } from '../helpers/cri/containerd.ts';
import { startEnvhookOn, startTmpfsNode } from '../helpers/cri/tmpfs-node.ts';
import { runPod, type KubeletPod } from '../helpers/cri/pod.ts';
import type { NriProcess } from '../helpers/nri/process.ts';
import { sleep, waitFor } from '../helpers/wait.ts';
import { atomicVolumeDir, atomicWrite, type Projection } from '../../scripts/kubelet-pod.ts';

const FILES = Number(process.env.ENVHOOK_ATTACK_FILES) || 4000;
const CANARY = 'CANARY-attack-7d2c';
const KILLED = /worker not answering/;

/** A Secret of `files` keys of ~25 bytes each (100 KB for FILES), generation `gen`. */
function bigSecret(gen: number, files = FILES): Record<string, Projection> {
  const out: Record<string, Projection> = {};
  for (let i = 0; i < files; i++) out[`k${i}`] = { data: `${CANARY}-${gen}-${i}`, mode: 0o400 };
  return out;
}

/** A pod in namespace `victim` whose container asks for VICTIM_VAR: created, started, its PID 1 env read. */
async function victim(c: CriContainerd, kubeletRoot: string, n: number): Promise<{ env: string | undefined; ms: number }> {
  const env = { app: [{ name: 'VICTIM_VAR', value: `victim-${n}` }] };
  const pod = await runPod(c, kubeletRoot, {
    name: `victim-${n}-${process.pid}`,
    namespace: 'victim',
    handler: '',
    annotations: { 'envhook.io/env': JSON.stringify(env) },
  });
  const start = Date.now();
  const id = await pod.run({ name: 'app', command: ['sleep', '3600'] });
  const ms = Date.now() - start;
  const environ = fs.readFileSync(`/proc/${await pod.pid(id)}/environ`, 'utf8').split('\0');
  const v = environ.find((e) => e.startsWith('VICTIM_VAR='));
  await pod.remove();
  return { env: v?.slice('VICTIM_VAR='.length), ms };
}

/** An attacker pod with `volumes` copies of the big Secret (of `files` keys at first), every one with owners. */
async function attacker(c: CriContainerd, kubeletRoot: string, name: string, volumes: number, files = FILES): Promise<KubeletPod> {
  const names = Array.from({ length: volumes }, (_, i) => `big${i}`);
  const secrets = Object.fromEntries(names.map((v) => [v, bigSecret(0, files)]));
  const owners = names.map((volume) => ({ volume, defaultUser: 1000 }));
  return runPod(c, kubeletRoot, {
    name: `${name}-${process.pid}`,
    namespace: 'attacker',
    handler: '',
    annotations: { 'envhook.io/volumeOwners': JSON.stringify(owners) },
    secrets,
  });
}

/** A container created and started, its create retried (twice at most) when envhook refused it for time, as the kubelet retries. */
async function runRetried(pod: KubeletPod, c: Parameters<KubeletPod['run']>[0]): Promise<string> {
  for (let i = 0; ; i++) {
    try {
      return await pod.run({ ...c, attempt: i });
    } catch (err) {
      if (i === 2 || !/request timeout/.test((err as Error).message)) throw err;
    }
  }
}

/** The plugin's lines about owned copies (for a failure's message). */
function copyLines(p: NriProcess): string {
  return p
    .log()
    .split('\n')
    .filter((l) => /owned cop|worker|copier|big0/.test(l))
    .slice(-40)
    .join('\n');
}

const mountsOf = (volumes: number, from = 0) =>
  Object.fromEntries(Array.from({ length: volumes }, (_, i) => [`big${from + i}`, `/big${i}`]));

t.setTimeout(600_000);

t.test(
  `containerd 2.1 + envhook nri: an attacker's ${FILES}-file owned volumes never take the worker down, a victim always gets its env`,
  { skip: missingForCri('2.1') },
  async (t) => {
    // The kubelet keeps secret volumes on tmpfs, and envhook's run directory is one (/run): so here.
    const node = await startTmpfsNode(t, '512m');
    const { c, kubeletRoot, stop, unmount } = node;
    const budgets = ['--pod-copy-files', '100000', '--pod-copy-bytes', String(256 << 20), '--node-copy-bytes', String(512 << 20)];
    const p = await startEnvhookOn(t, node, budgets);
    const copies = (uid: string) => path.join(p.runDir, 'volumes', uid);

    await t.test('item 1: a CreateContainer of 4 mounts of the volume, a victim created 0.4 s into it', async (t) => {
      const a = await attacker(c, kubeletRoot, 'attack-create', 4);
      const start = Date.now();
      const created = a
        .create({ name: 'app', command: ['sleep', '3600'], volumeMounts: mountsOf(4), user: 1000 })
        .then((id) => ({ id, error: undefined as string | undefined, ms: Date.now() - start }))
        .catch((err: Error) => ({ id: undefined, error: err.message, ms: Date.now() - start }));
      await sleep(400);
      const v = await victim(c, kubeletRoot, 1);
      const r = await created;
      t.comment(`attacker CreateContainer ${r.ms} ms: ${r.error ?? 'created'}; victim CreateContainer+Start ${v.ms} ms`);
      t.equal(v.env, 'victim-1', 'the victim container has VICTIM_VAR');
      t.notMatch(p.log(), KILLED, 'the worker was never killed for silence');
      if (r.error !== undefined) {
        t.match(r.error, /envhook: volume "big\d": .*(request timeout|budget)/, 'the attacker is refused with one line naming its volume');
        // Removed by the job that gave up, in slices of the worker's loop: after the reply, at once.
        const none = () => !(fs.existsSync(copies(a.uid)) && fs.readdirSync(copies(a.uid)).length > 0);
        await waitFor(none, 10_000, 'no copy of the refused start').catch(() => {});
        t.ok(none(), 'a refused start leaves no copy');
      } else {
        await a.start(r.id!);
        const pid = await a.pid(r.id!);
        t.equal(fs.statSync(`/proc/${pid}/root/big3/k0`).uid, 1000, 'or its copies are made, owned');
      }
      await a.remove();
    });

    await t.test('item 2: a rewrite of a 4,000-file owned volume under 3 containers', async (t) => {
      // Small at the containers' starts; the Secret's update makes it 4,000 files.
      const a = await attacker(c, kubeletRoot, 'attack-rewrite', 3, 4);
      for (let i = 0; i < 3; i++) {
        const id = await runRetried(a, { name: `app${i}`, command: ['sleep', '3600'], volumeMounts: mountsOf(1, i), user: 1000 });
        t.equal(fs.readFileSync(`/proc/${await a.pid(id)}/root/big0/k1`, 'utf8'), `${CANARY}-0-1`, `container ${i} reads the copy`);
      }
      for (let i = 0; i < 3; i++) atomicWrite(atomicVolumeDir(a.pod, 'secret', `big${i}`), bigSecret(1));
      await sleep(200);
      const v = await victim(c, kubeletRoot, 2);
      t.equal(v.env, 'victim-2', 'a victim created during the re-copies has VICTIM_VAR');
      const copied = (i: number) => {
        try {
          return fs.readFileSync(path.join(copies(a.uid), `big${i}`, `k${FILES - 1}`), 'utf8') === `${CANARY}-1-${FILES - 1}`;
        } catch {
          return false;
        }
      };
      await waitFor(() => [0, 1, 2].every(copied), 60_000, 'the rewrite reaches every copy').catch((err: Error) => {
        throw new Error(`${err.message}: ${copyLines(p)}`, { cause: err });
      });
      t.pass('the rewrite reached every copy');
      t.notMatch(p.log(), KILLED, 'the worker was never killed for silence');
      await a.remove();
    });

    await t.test('item 3: the removal of a pod with 8 such volumes', async (t) => {
      // Small at the containers' starts; then updated to 4,000 files each, which the copies follow.
      const a = await attacker(c, kubeletRoot, 'attack-remove', 8, 4);
      for (let i = 0; i < 2; i++)
        await runRetried(a, { name: `app${i}`, command: ['sleep', '3600'], volumeMounts: mountsOf(4, 4 * i), user: 1000 });
      t.equal(fs.readdirSync(copies(a.uid)).length, 8, '8 copies made');
      for (let i = 0; i < 8; i++) atomicWrite(atomicVolumeDir(a.pod, 'secret', `big${i}`), bigSecret(1));
      const full = (i: number) => fs.existsSync(path.join(copies(a.uid), `big${i}`, `k${FILES - 1}`));
      await waitFor(() => Array.from({ length: 8 }, (_, i) => i).every(full), 120_000, 'every copy follows the update');
      const removed = a.remove();
      await sleep(100);
      const v = await victim(c, kubeletRoot, 3);
      await removed;
      t.equal(v.env, 'victim-3', 'a victim created during the removal has VICTIM_VAR');
      await waitFor(() => !fs.existsSync(copies(a.uid)), 30_000, "the attacker's copies removed");
      t.pass("the attacker's copies are removed");
      t.notMatch(p.log(), KILLED, 'the worker was never killed for silence');
    });

    const worker = p.status()?.workerPid;
    if (worker !== undefined)
      t.comment(`worker peak RSS ${/^VmHWM:\s+(.*)$/m.exec(fs.readFileSync(`/proc/${worker}/status`, 'utf8'))?.[1]}`);
    t.notMatch(p.log(), CANARY, 'no file content in the log');
    t.equal(await p.stop(), 0);
    unmount();
    t.same(await stop(), { processes: [], mounts: [] }, 'teardown leaves no process or mount');
  },
);
