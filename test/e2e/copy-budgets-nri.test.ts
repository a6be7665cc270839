// The budgets of owned copies, as the kubelet meets them: `envhook nri` on a real containerd 2.1.9
// over CRI, with small budgets set by its flags. A container whose start would pass the pod's
// budget is refused with envhook's one line (naming the volume, the pod, the budget and its
// setting), and nothing of it is written; its pod's other container, running on a copy made
// before, keeps reading it (a refused start never removes a copy another container uses). The
// node's budget counts the copies of every pod. No value of a file in any line.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { missingForCri } from '../helpers/cri/containerd.ts';
import { startEnvhookOn, startTmpfsNode } from '../helpers/cri/tmpfs-node.ts';
import { runPod } from '../helpers/cri/pod.ts';
import { waitFor } from '../helpers/wait.ts';
import type { Projection } from '../../scripts/kubelet-pod.ts';

const CANARY = 'CANARY-budgets-e2e-4a7d';

/** A Secret of `files` keys, each `bytes` long. */
function secret(files: number, bytes = 50): Record<string, Projection> {
  const out: Record<string, Projection> = {};
  for (let i = 0; i < files; i++) out[`k${i}`] = { data: `${CANARY}-${i}-`.padEnd(bytes, 'x'), mode: 0o400 };
  return out;
}

/** The message a refused CreateContainer gives (undefined when it was created). */
const refusal = (created: Promise<unknown>): Promise<string | undefined> =>
  created.then(
    () => undefined,
    (e: Error) => e.message,
  );

t.setTimeout(300_000);

t.test(
  'containerd 2.1 + envhook nri: the budgets of owned copies refuse a start with one line',
  { skip: missingForCri('2.1') },
  async (t) => {
    const node = await startTmpfsNode(t, '64m');
    const { c, kubeletRoot, stop, unmount } = node;
    const p = await startEnvhookOn(t, node, ['--pod-copy-files', '10', '--node-copy-bytes', '1000']);
    const copies = (uid: string) => path.join(p.runDir, 'volumes', uid);
    const owners = (names: string[]) => ({
      'envhook.io/volumeOwners': JSON.stringify(names.map((volume) => ({ volume, defaultUser: 1000 }))),
    });

    await t.test("one pod's files: the second container refused, the first keeps reading its copy", async (t) => {
      const pod = await runPod(c, kubeletRoot, {
        name: `files-${process.pid}`,
        namespace: 'budgets',
        handler: '',
        annotations: owners(['a', 'b']),
        secrets: { a: secret(6, 20), b: secret(6, 20) },
      });
      const first = await pod.run({ name: 'app1', command: ['sleep', '3600'], volumeMounts: { a: '/a' }, user: 1000 });
      const pid = await pod.pid(first);
      const read = () => fs.readFileSync(`/proc/${pid}/root/a/k5`, 'utf8');
      t.equal(read(), `${CANARY}-5-`.padEnd(20, 'x'), 'the first container reads its copy');
      const err = await refusal(pod.create({ name: 'app2', command: ['sleep', '3600'], volumeMounts: { a: '/a', b: '/b' }, user: 1000 }));
      t.match(
        err,
        `envhook: volume "b" of pod ${pod.uid}: the pod's owned copies would hold 12 files, over the pod's budget of 10 files (podCopyFiles): ` +
          'give the pod fewer files in its volumes with owners, or raise podCopyFiles in the settings file (ENVHOOK_POD_COPY_FILES)',
        "CreateContainer fails with envhook's line",
      );
      t.notMatch(err ?? '', CANARY);
      t.same(fs.readdirSync(copies(pod.uid)), ['a'], 'nothing of the refused start written');
      t.equal(read(), `${CANARY}-5-`.padEnd(20, 'x'), 'the first container still reads its copy');
      t.equal(fs.statSync(`/proc/${pid}/root/a/k5`).uid, 1000);
      await pod.remove();
    });

    await t.test("the node's bytes, across two pods", async (t) => {
      const pod = (n: number) =>
        runPod(c, kubeletRoot, {
          name: `node-${n}-${process.pid}`,
          namespace: 'budgets',
          handler: '',
          annotations: owners(['s']),
          secrets: { s: secret(6, 100) },
        });
      const one = await pod(1);
      await one.run({ name: 'app', command: ['sleep', '3600'], volumeMounts: { s: '/s' }, user: 1000 });
      const two = await pod(2);
      const err = await refusal(two.create({ name: 'app', command: ['sleep', '3600'], volumeMounts: { s: '/s' }, user: 1000 }));
      t.match(
        err,
        `envhook: volume "s" of pod ${two.uid}: the node's owned copies would hold 1.17 KiB, over the node's budget of 1000 bytes (nodeCopyBytes): ` +
          'the node holds too many owned copies already; raise nodeCopyBytes in the settings file (ENVHOOK_NODE_COPY_BYTES) if its run directory has room',
      );
      t.notOk(fs.existsSync(copies(two.uid)), 'nothing of the refused start written');
      await one.remove();
      await waitFor(() => !fs.existsSync(copies(one.uid)), 30_000, "the first pod's copies removed with it");
      const id = await two.run({ name: 'app', command: ['sleep', '3600'], volumeMounts: { s: '/s' }, user: 1000, attempt: 1 });
      t.equal(fs.statSync(`/proc/${await two.pid(id)}/root/s/k0`).uid, 1000, 'once the first pod is gone, the second one starts');
      const held = (s: unknown) => (s as { owners?: { copyBytes?: number; copyFiles?: number } } | undefined)?.owners;
      const status = await p.waitForStatus((s) => held(s)?.copyBytes === 600);
      t.match(held(status), { copyBytes: 600, copyFiles: 6 }, 'the status file: what the copies hold');
      await two.remove();
    });

    t.notMatch(p.log(), CANARY, 'no file content in the log');
    t.equal(await p.stop(), 0);
    unmount();
    t.same(await stop(), { processes: [], mounts: [] }, 'teardown leaves no process or mount');
  },
);
