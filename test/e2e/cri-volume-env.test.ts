// Env from secret, configMap, projected and CSI volumes (docs/design.md#env-from-other-volumes) on a real containerd
// 2.1.9 (Debian sid) driven over CRI as the kubelet drives it, in both modes on one containerd:
// NRI (`envhook nri`, pods without runtimeClassName) and the shim (the envhook runtime handler,
// the plugin stopped, so the front runs the pipeline). Secret and projected volumes on a tmpfs
// as the kubelet mounts them, a configMap volume on disk, and a CSI-like volume: a tmpfs at
// kubernetes.io~csi/<vol>/mount written through the atomic writer, as the secrets-store driver
// writes. fileKeyRef, fileRef and envFrom (fileRef and volumeRef) from each, on PID 1 and through
// ExecSync; a missing file, a symlink out of the volume, a FIFO and a too-large file each fail
// the start with envhook's line; no canary value in any error or log. The cases are
// test/helpers/shim/volume-env-cases.ts.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { prepareWithEnvhook } from '../helpers/cri/envhook.ts';
import { missingForCri, NRI_CONNECTED } from '../helpers/cri/containerd.ts';
import { runPod, type KubeletPod } from '../helpers/cri/pod.ts';
import { startNriProcess, type NriProcess } from '../helpers/nri/process.ts';
import { onPid1AndExec, raw } from '../helpers/cri/cases.ts';
import { ANNOTATIONS, CANARY, check, FAILURES, HOSTILE, makeHostile, VOLUMES } from '../helpers/shim/volume-env-cases.ts';
import { waitFor } from '../helpers/wait.ts';

t.setTimeout(900_000);
const CONTAINER = { name: 'app', command: ['sleep', '3600'], env: { POD_ENV: 'kept' } };

t.test(
  'containerd 2.1 over CRI: env from secret, configMap, projected and CSI volumes, NRI and shim',
  {
    skip: missingForCri('2.1'),
  },
  async (t) => {
    const dir = t.testdir({ outside: { secret: `${CANARY}-outside\n` } });
    const outside = path.join(dir, 'outside/secret');
    const node = prepareWithEnvhook({ version: '2.1', nri: true });
    t.comment(node.containerd.label);
    const pods: KubeletPod[] = [];
    let plugin: NriProcess | undefined;
    let stopped = false;
    t.teardown(async () => {
      await plugin?.stop();
      for (const p of pods.splice(0)) await p.remove().catch(() => {});
      if (!stopped) await node.containerd.stop();
    });
    await node.containerd.start();
    const from = fs.readFileSync(node.containerd.paths.log, 'utf8').length;
    plugin = startNriProcess(['--socket', node.containerd.paths.nriSocket, '--kubelet-root', node.kubeletRoot], { dir });
    await waitFor(
      () => NRI_CONNECTED.test(fs.readFileSync(node.containerd.paths.log, 'utf8').slice(from)),
      60_000,
      'containerd: plugin connected',
    );
    let n = 0;
    const pod = async (handler: string, annotations: Record<string, unknown>) => {
      const p = await runPod(node.containerd, node.kubeletRoot, {
        name: `vol${n++}-${process.pid}`,
        handler,
        annotations: raw(annotations),
        ...VOLUMES,
        tmpfs: true,
        secrets: { ...VOLUMES.secrets, ...HOSTILE },
      });
      pods.push(p);
      makeHostile(p.pod, outside);
      return p;
    };

    for (const mode of ['NRI', 'shim'] as const) {
      const handler = mode === 'NRI' ? '' : 'envhook';
      if (mode === 'shim') {
        await plugin?.stop();
        plugin = undefined;
      }
      await t.test(`${mode}: every source from every volume, on PID 1 and through ExecSync`, async (t) => {
        const p = await pod(handler, ANNOTATIONS);
        const id = await p.run(CONTAINER);
        await onPid1AndExec(t, p, id, check);
        t.equal(
          node.runs().some((l) => l.includes(id)),
          mode === 'shim',
          mode === 'shim' ? 'the front ran the pipeline' : 'no envhook process for the container (runc handler)',
        );
      });
      for (const [name, annotations, message] of FAILURES) {
        await t.test(`${mode}: ${name} fails the start with envhook's line`, async (t) => {
          const p = await pod(handler, annotations);
          let text: string;
          if (mode === 'NRI') {
            text = await p.create(CONTAINER).then(
              () => 'CreateContainer succeeded',
              (e: Error) => e.message,
            );
            t.match(text, `failed to get NRI adjustment for container: rpc error: code = Unknown desc = envhook: ${message}`);
          } else {
            const id = await p.create(CONTAINER);
            text = await p.start(id).then(
              () => 'StartContainer succeeded',
              (e: Error) => e.message,
            );
            t.match(text, `envhook: ${message}`);
            text += ` ${(await p.status(id)).message}`;
          }
          t.notMatch(text, CANARY);
        });
      }
    }

    const logs = [
      fs.readFileSync(node.containerd.paths.log, 'utf8'),
      node.logText(),
      ...fs
        .readdirSync(dir)
        .filter((f) => f.endsWith('.log'))
        .map((f) => fs.readFileSync(path.join(dir, f), 'utf8')),
    ].join('\n');
    t.match(logs, /nri: adjusted/, "the plugin's log was read");
    t.notMatch(logs, CANARY, "no value in containerd's log, the plugin's log or the front's log");
    for (const p of pods.splice(0)) await p.remove();
    stopped = true;
    t.same(await node.containerd.stop(), { processes: [], mounts: [] }, 'teardown leaves no process, mount or shim');
  },
);
