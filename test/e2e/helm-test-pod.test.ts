// The chart's `helm test` pod, as helm renders it, run as the kubelet runs it over CRI on a real
// containerd 2.1.9 (no runtimeClassName): its init container writes the env file into the
// emptyDir, its check container exits 0 with CONFIG_VAR from it through `envhook nri`, and exits 1
// when no envhook adjusted it (the plugin not running: NRI fails open) — the test can fail.
import t, { type Test } from 'tap';
import { startNriNode } from './cri-nri-suite.ts';
import { missingForCri } from '../helpers/cri/containerd.ts';
import { ContainerState } from '../helpers/cri/client.ts';
import { runPod, type KubeletPod } from '../helpers/cri/pod.ts';
import { objectOf, renderChart } from '../helpers/helm.ts';
import { waitFor } from '../helpers/wait.ts';

t.setTimeout(600_000);

/** Creates and starts one container of the rendered pod, waits for it to exit, returns its exit code. */
async function runToExit(pod: KubeletPod, c: any, mounts: Record<string, string>): Promise<number> {
  const id = await pod.create({ name: c.name, command: c.command, volumeMounts: mounts });
  await pod.start(id);
  let status: any;
  await waitFor(
    async () => {
      status = await pod.status(id);
      return status.state === ContainerState.EXITED;
    },
    60_000,
    `container ${c.name} exited`,
    50,
  );
  return status.exitCode;
}

t.test('the helm test pod on containerd 2.1.9', { skip: missingForCri('2.1') }, async (t: Test) => {
  const rendered = objectOf(renderChart(), 'Pod');
  t.notOk(rendered.spec.runtimeClassName, 'NRI mode: no runtimeClassName');
  const mounts = (c: any) => Object.fromEntries(c.volumeMounts?.map((m: any) => [m.name, m.mountPath]) ?? []);
  const h = await startNriNode(t, '2.1');
  const { node } = h;
  let n = 0;
  const runTestPod = async () => {
    const pod = await runPod(node.containerd, node.kubeletRoot, {
      name: `helm-test-${n++}-${process.pid}`,
      handler: '',
      annotations: { 'envhook.io/env': rendered.metadata.annotations['envhook.io/env'] },
      emptyDirs: Object.fromEntries(rendered.spec.volumes.map((v: any) => [v.name, {}])),
    });
    t.teardown(() => pod.remove());
    const init = rendered.spec.initContainers[0];
    t.equal(await runToExit(pod, init, mounts(init)), 0, 'the init container wrote the env file');
    const check = rendered.spec.containers[0];
    return runToExit(pod, check, mounts(check));
  };
  t.equal(await runTestPod(), 1, 'no envhook registered: the check container exits 1 (helm test fails)');
  await h.startPlugin();
  t.equal(await runTestPod(), 0, 'envhook nri registered: CONFIG_VAR from the env file, exit 0 (helm test passes)');
});
