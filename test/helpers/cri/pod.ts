// Pods driven over CRI as the kubelet drives them: the pod directory under a private kubelet
// root (kubelet.ts: etc-hosts, containers/<name>/<id> termination logs, emptyDirs; atomic-writer
// secret volumes), RunPodSandbox with the pod's annotations and a runtime handler, host network
// (no CNI), and CreateContainer requests carrying the mounts the kubelet sends (volume mounts,
// then /etc/hosts, then /dev/termination-log) and the env it builds (service variables included).
import crypto from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { ContainerState, type CriClient, type CriMessage } from './client.ts';
import { BUSYBOX_IMAGE, type CriContainerd } from './containerd.ts';
import { layOutPod, namespaceOptions, type PodOptions } from './pod-layout.ts';
import type { Pod } from '../../../scripts/kubelet-pod.ts';
import { waitExeced } from '../proc.ts';

export { layOutPod, type PodOptions } from './pod-layout.ts';

interface ContainerOptions {
  name: string;
  command?: string[];
  args?: string[];
  /** The env the kubelet built: pod env, then service variables. */
  env?: Record<string, string>;
  /** Volumes of the pod mounted into the container: volume name → container path. */
  volumeMounts?: Record<string, string>;
  /** runAsUser and runAsGroup of the container's securityContext (the image's user otherwise). */
  user?: number;
  /** The kubelet's restart count: 0 at first, one more each time it creates the container again. */
  attempt?: number;
}

export interface KubeletPod {
  id: string;
  uid: string;
  pod: Pod;
  config: CriMessage;
  /** CreateContainer as the kubelet sends it; returns the container id. */
  create(c: ContainerOptions): Promise<string>;
  start(id: string): Promise<void>;
  /** Create and start; the container's PID is recorded for the leftover check. */
  run(c: ContainerOptions): Promise<string>;
  status(id: string): Promise<CriMessage>;
  /** PID 1 of a running container (ContainerStatus verbose info, as crictl inspect shows it). */
  pid(id: string): Promise<number>;
  /** The annotations of the container's stored OCI spec (ContainerStatus verbose info): what NRI's adjustment left there. */
  specAnnotations(id: string): Promise<Record<string, string>>;
  /** `runtimeSpec.process.env` of ContainerStatus verbose info, what `crictl inspect` prints of the env. */
  specEnv(id: string): Promise<string[]>;
  execSync(id: string, cmd: string[]): Promise<{ exitCode: number; stdout: string; stderr: string }>;
  /** StopPodSandbox then RemovePodSandbox after stopping and removing its containers, as the kubelet does. */
  remove(): Promise<void>;
}

export async function runPod(c: CriContainerd, kubeletRoot: string, o: PodOptions): Promise<KubeletPod> {
  const { uid, pod, config, volumes, tmpfsMounts } = layOutPod(kubeletRoot, o);
  const labels = config.labels as Record<string, string>;
  const cri: CriClient = c.cri;
  const { podSandboxId: id } = await cri.call('RunPodSandbox', { config, runtimeHandler: o.handler });
  const sb = await cri.call('PodSandboxStatus', { podSandboxId: id, verbose: true });
  const sbPid = JSON.parse(sb.info?.info ?? '{}').pid;
  if (typeof sbPid === 'number') c.track(sbPid);

  const self: KubeletPod = {
    id,
    uid,
    pod,
    config,
    async create(k) {
      const mounts = Object.entries(k.volumeMounts ?? {}).map(([v, containerPath]) => {
        const hostPath = volumes.get(v);
        if (!hostPath) throw new Error(`pod ${o.name} has no volume ${v}`);
        // emptyDirs read-write, atomic-writer volumes read-only, as the kubelet mounts them
        return { containerPath, hostPath, readonly: !(v in (o.emptyDirs ?? {})) };
      });
      // The kubelet's own mounts: /etc/hosts and a fresh termination-log file a start.
      for (const m of pod.mounts(k.name, crypto.randomBytes(4).toString('hex'))) {
        mounts.push({ containerPath: m.destination, hostPath: m.source, readonly: m.options.includes('ro') });
      }
      // A pod in a user namespace: the kubelet gives every mount the pod's mappings (the runtime idmaps it).
      const idmapped = o.userns ? mounts.map((m) => ({ ...m, uidMappings: [o.userns], gidMappings: [o.userns] })) : mounts;
      const request = {
        podSandboxId: id,
        sandboxConfig: config,
        config: {
          metadata: { name: k.name, attempt: k.attempt ?? 0 },
          image: { image: BUSYBOX_IMAGE },
          command: k.command ?? [],
          args: k.args ?? [],
          // cri-api ≥ 0.33: KeyValue.value is bytes (wire-compatible with 1.6's string)
          envs: Object.entries(k.env ?? {}).map(([key, value]) => ({ key, value: Buffer.from(value) })),
          mounts: idmapped,
          labels: { ...labels, 'io.kubernetes.container.name': k.name },
          annotations: {
            'io.kubernetes.container.restartCount': String(k.attempt ?? 0),
            'io.kubernetes.container.terminationMessagePath': '/dev/termination-log',
            'io.kubernetes.container.terminationMessagePolicy': 'File',
          },
          logPath: `${k.name}/${k.attempt ?? 0}.log`,
          linux: {
            securityContext: {
              namespaceOptions: namespaceOptions(o.userns),
              ...(k.user === undefined ? {} : { runAsUser: { value: BigInt(k.user) }, runAsGroup: { value: BigInt(k.user) } }),
            },
          },
        },
      };
      return (await cri.call('CreateContainer', request)).containerId;
    },
    async start(cid) {
      await cri.call('StartContainer', { containerId: cid });
    },
    async run(k) {
      const cid = await self.create(k);
      await self.start(cid);
      c.track(await self.pid(cid));
      return cid;
    },
    async status(cid) {
      return (await cri.call('ContainerStatus', { containerId: cid, verbose: true })).status;
    },
    async pid(cid) {
      const res = await cri.call('ContainerStatus', { containerId: cid, verbose: true });
      if (res.status.state !== ContainerState.RUNNING)
        throw new Error(
          `container ${k8sName(res.status)} is not running (state ${res.status.state}: ${res.status.reason} ${res.status.message})`,
        );
      const pid: number = JSON.parse(res.info.info).pid;
      await waitExeced(pid);
      return pid;
    },
    async specAnnotations(cid) {
      const res = await cri.call('ContainerStatus', { containerId: cid, verbose: true });
      return (JSON.parse(res.info.info) as { runtimeSpec?: { annotations?: Record<string, string> } }).runtimeSpec?.annotations ?? {};
    },
    async specEnv(cid) {
      const res = await cri.call('ContainerStatus', { containerId: cid, verbose: true });
      return (JSON.parse(res.info.info) as { runtimeSpec?: { process?: { env?: string[] } } }).runtimeSpec?.process?.env ?? [];
    },
    async execSync(cid, cmd) {
      const r = await cri.call('ExecSync', { containerId: cid, cmd, timeout: 30n });
      return { exitCode: r.exitCode, stdout: Buffer.from(r.stdout).toString(), stderr: Buffer.from(r.stderr).toString() };
    },
    async remove() {
      const { containers = [] } = await cri.call('ListContainers', { filter: { podSandboxId: id } });
      for (const k of containers) {
        await cri.call('StopContainer', { containerId: k.id, timeout: 0n });
        await cri.call('RemoveContainer', { containerId: k.id });
      }
      await cri.call('StopPodSandbox', { podSandboxId: id });
      await cri.call('RemovePodSandbox', { podSandboxId: id });
      for (const m of tmpfsMounts.splice(0)) execFileSync('umount', [m]);
    },
  };
  return self;
}

const k8sName = (s: CriMessage) => s.metadata?.name ?? s.id;
