// Eviction of containers created while envhook was not registered, on a real containerd driven
// over CRI as the kubelet drives it: pods started with no plugin (NRI fails open: no env), then
// `envhook nri` registered. With the pod annotation, or the node's --evict-unapplied, envhook
// stops them over containerd's CRI socket (state EXITED, exit code 137: killed at once), and the
// kubelet's next CreateContainer (attempt 1) goes through envhook and gets the env; without
// either, they are reported and left running; --evict-unapplied and --cri-socket as the chart
// renders them (evictUnapplied, criSocket). The kubelet itself is not here: its restart is
// played by the test, as the kubelet does it for a container of an Always or OnFailure pod that
// exited non-zero. Run on 2.1.9 (test/e2e/cri-evict.test.ts) and 1.7.24
// (test/e2e/cri-evict-containerd17.test.ts).
import t, { type Test } from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { missingForCri, type ContainerdVersion } from '../helpers/cri/containerd.ts';
import { ContainerState } from '../helpers/cri/client.ts';
import { startNriNode } from './cri-nri-suite.ts';
import { freePort } from '../helpers/nri/process.ts';
import { envhook } from '../helpers/bundle.ts';
import { runPod, type KubeletPod } from '../helpers/cri/pod.ts';
import { procEnviron } from '../helpers/proc.ts';
import { APP_CHECKS, CANARY, DB_FILES, onPid1AndExec, raw } from '../helpers/cri/cases.ts';
import { EVICT_KEY } from '../../src/k8s/annotation-keys.ts';
import { objectOf, renderChart } from '../helpers/helm.ts';

const ENV = {
  'envhook.io/env': { app: [{ name: 'DB', valueFrom: { fileKeyRef: { volumeName: 'config', path: 'db.env', key: 'DB_HOST' } } }] },
};
const CONTAINER = { name: 'app', command: ['sleep', '3600'], env: { POD_ENV: 'kept' } };

/** What the chart (charts/envhook, `helm template`) gives envhook nri for eviction with evictUnapplied and criSocket set: its flags, as rendered. */
function chartEvictFlags(criSocket: string): { criSocket: string; extra: string[] } {
  const ds = objectOf(renderChart(['evictUnapplied=true', `criSocket=${criSocket}`]), 'DaemonSet', '-nri');
  const command: string[] = ds.spec.template.spec.containers[0].command;
  const i = command.indexOf('--cri-socket');
  return { criSocket: command[i + 1]!, extra: command.filter((a) => a === '--evict-unapplied') };
}

export function criEvictSuite(version: ContainerdVersion): void {
  t.test(
    `containerd ${version}: containers created while envhook was away, evicted over CRI`,
    {
      skip: missingForCri(version),
    },
    async (t) => {
      const h = await startNriNode(t, version);
      const { node, dir } = h;
      let metricsPort = 0;
      const startPlugin = async (extra: string[], criSocket = node.containerd.paths.address) => {
        metricsPort = await freePort();
        return h.startPlugin(['--cri-socket', criSocket, '--metrics-address', `127.0.0.1:${metricsPort}`, ...extra]);
      };
      const metric = async () => (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
      const config = path.join(dir, 'empty-config.json');
      const cri = node.containerd.cri;
      let n = 0;
      const pods: KubeletPod[] = [];
      const pod = async (annotations: Record<string, unknown>) => {
        const p = await runPod(node.containerd, node.kubeletRoot, {
          name: `ev${n++}-${process.pid}`,
          handler: '',
          annotations: raw(annotations),
          emptyDirs: { config: DB_FILES },
        });
        pods.push(p);
        return p;
      };
      const state = async (id: string) => {
        const { status } = await cri.call('ContainerStatus', { containerId: id });
        return { state: status.state as number, exitCode: status.exitCode as number };
      };
      /** Started with no plugin registered: runs without its env (NRI fails open). */
      const runMissed = async (p: KubeletPod) => {
        const id = await p.run(CONTAINER);
        t.notOk(procEnviron(await p.pid(id)).has('DB'), 'started without its env (no plugin registered)');
        return id;
      };

      /**
       * `envhook status` and `envhook doctor` as the admin runs them: each container still running
       * without its env a problem line (exit 1), none once they are evicted; the gauge the same.
       */
      const unappliedLines = async (t: Test, runDir: string, running: KubeletPod[], evictionFailed = false) => {
        const args = ['--run-dir', runDir, '--prefix', path.join(dir, 'no-install')];
        const env = { ENVHOOK_CONFIG: config };
        const expected = running.map((p) => {
          const { name, namespace } = p.config.metadata;
          const what = `problem unapplied: container app of pod ${name} in namespace ${namespace} runs without its env (created while the NRI plugin was not registered)`;
          const del = `kubectl delete pod ${name} -n ${namespace} (the kubelet creates it again, through envhook)`;
          return evictionFailed
            ? `${what} — its eviction failed (see the plugin's log); ${del}`
            : `${what} — ${del}, or let envhook evict such containers: the pod annotation envhook.io/evictUnapplied: "true", or evictUnapplied in ${config}`;
        });
        const status = envhook(['status', ...args], { env });
        t.same(
          status.stdout.split('\n').filter((l) => l.includes(' unapplied: ')),
          expected.map((l) => `  ${l}`),
          'status: one problem line a container',
        );
        t.equal(status.status, running.length ? 1 : 0, 'status: exit 1 on such a container');
        if (running.length) t.equal(status.stderr, `envhook: ${expected[0]!.slice('problem '.length)}\n`);
        const doctor = envhook(['doctor', ...args], { env });
        const lines = doctor.stdout.split('\n').filter((l) => l.includes(' unapplied: '));
        t.same(lines, running.length ? expected : ['ok unapplied: no container runs without the env it asked for'], 'doctor: the same');
        t.match(await metric(), new RegExp(`^envhook_nri_containers_without_env ${running.length}$`, 'm'), 'the gauge');
      };

      const asks = await pod({ ...ENV, [EVICT_KEY]: 'true' });
      const quiet = await pod(ENV);
      const plain = await pod({});
      const [asksId, quietId, plainId] = [await runMissed(asks), await runMissed(quiet), await plain.run(CONTAINER)];

      await t.test('the pod annotation: its container is stopped, the other missed one reported and left running', async (t) => {
        const plugin = await startPlugin([]);
        const s = await plugin.waitForStatus((st) => st.counts.missed === 2 && st.counts.evicted === 1, 30_000);
        t.equal(s.counts.evictionsFailed, 0);
        t.same(
          await state(asksId),
          { state: ContainerState.EXITED, exitCode: 137 },
          'EXITED, killed (137): a failure to the kubelet whatever the program does on SIGTERM',
        );
        t.same(await state(quietId), { state: ContainerState.RUNNING, exitCode: 0 }, 'no annotation, no setting: left running');
        t.same(await state(plainId), { state: ContainerState.RUNNING, exitCode: 0 }, 'a pod without envhook: untouched');
        await unappliedLines(t, plugin.runDir, [quiet]);
        const lines = plugin
          .log()
          .split('\n')
          .filter((l) => l.includes('nri: evicted'));
        t.equal(lines.length, 1, 'one line');
        t.match(JSON.parse(lines[0]!), {
          level: 30,
          container: 'app',
          id: asksId,
          pod: asks.config.metadata.name,
          namespace: asks.config.metadata.namespace,
          podUid: asks.uid,
          socket: node.containerd.paths.address,
        });
      });

      await t.test("the kubelet's restart (attempt 1) goes through envhook and has the env", async (t) => {
        const id = await asks.run({ ...CONTAINER, attempt: 1 });
        await onPid1AndExec(t, asks, id, APP_CHECKS.fileKeyRef!);
      });

      await t.test('--evict-unapplied as the chart renders it: every missed container, after a restart of envhook', async (t) => {
        await h.plugin!.stop();
        const later = await pod(ENV);
        const laterId = await runMissed(later);
        // The flags as the chart renders them (evictUnapplied=true, criSocket): they evict on the real runtime.
        const chart = chartEvictFlags(node.containerd.paths.address);
        t.same(chart, { criSocket: node.containerd.paths.address, extra: ['--evict-unapplied'] }, "the chart's flags");
        const plugin = await startPlugin(chart.extra, chart.criSocket);
        const s = await plugin.waitForStatus((st) => st.counts.evicted === 2, 30_000);
        t.same([s.counts.missed, s.counts.evictionsFailed], [2, 0], 'the two missed (the restarted one has its mark), both evicted');
        for (const id of [quietId, laterId]) t.same(await state(id), { state: ContainerState.EXITED, exitCode: 137 });
        await unappliedLines(t, plugin.runDir, []);
        t.same(await state(plainId), { state: ContainerState.RUNNING, exitCode: 0 }, 'a pod without envhook: untouched');
      });

      await t.test('a CRI socket that cannot be used: one warn line, counted failed, the plugin stays registered', async (t) => {
        await h.plugin!.stop();
        const missed = await pod({ ...ENV, [EVICT_KEY]: 'true' });
        const missedId = await runMissed(missed);
        const absent = path.join(node.containerd.dir, 'absent.sock');
        const plugin = await startPlugin([], absent);
        const s = await plugin.waitForStatus((st) => st.counts.evictionsFailed === 1, 30_000);
        t.same([s.connected, s.counts.evicted], [true, 0]);
        t.equal(plugin.log().match(/nri: eviction failed: the CRI socket cannot be used/g)?.length, 1, 'one line');
        t.match(plugin.log(), `"reason":"CRI socket ${absent}: no such file or directory (ENOENT)"`);
        t.same(await state(missedId), { state: ContainerState.RUNNING, exitCode: 0 }, 'left running');
        await unappliedLines(t, plugin.runDir, [missed], true);
        t.equal(plugin.child.exitCode, null, 'still running');
      });

      const logs = `${fs.readFileSync(node.containerd.paths.log, 'utf8')}\n${fs
        .readdirSync(dir)
        .filter((f) => f.endsWith('.log'))
        .map((f) => fs.readFileSync(path.join(dir, f), 'utf8'))
        .join('\n')}`;
      t.notMatch(logs, CANARY, "no value in containerd's log or the plugin's");
      for (const p of pods) await p.remove();
      t.same(await h.stop(), { processes: [], mounts: [] }, 'teardown leaves no process, mount or shim');
    },
  );
}
