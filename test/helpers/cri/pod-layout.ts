// A pod as the kubelet lays it out before it calls the runtime: the pod directory under a
// private kubelet root (kubelet.ts: etc-hosts, emptyDirs; atomic-writer.ts: secret, projected and
// configMap volumes; inline CSI volumes on a tmpfs) and the PodSandboxConfig it sends with RunPodSandbox (host network: no CNI).
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { NamespaceMode, type CriMessage } from './client.ts';
import { execFileSync } from 'node:child_process';
import { atomicVolumeDir, atomicWrite, makeAtomicVolume, makePod, type Pod, type Projection } from '../../../scripts/kubelet-pod.ts';

/** Host network, as a pod with hostNetwork: true: the node's network namespace, no CNI. */
const HOST_NETWORK = { network: NamespaceMode.NODE, pid: NamespaceMode.CONTAINER, ipc: NamespaceMode.POD };

export interface PodOptions {
  name: string;
  namespace?: string;
  handler: 'envhook' | 'runc' | string;
  /** Pod annotations (values JSON text, as the API server stores them). */
  annotations?: Record<string, string>;
  emptyDirs?: Record<string, Record<string, string | Buffer>>;
  secrets?: Record<string, Record<string, Projection>>;
  projected?: Record<string, Record<string, Projection>>;
  configMaps?: Record<string, Record<string, Projection>>;
  /** Inline CSI volumes: a tmpfs at kubernetes.io~csi/<name>/mount, written as the secrets-store driver writes (atomic writer). */
  csi?: Record<string, Record<string, Projection>>;
  /** Secret and projected volumes on a tmpfs of their own, as the kubelet mounts them (root only). */
  tmpfs?: boolean;
  /** `hostUsers: false`: the pod's user namespace, its UIDs and GIDs mapped as the kubelet maps them (one range each). */
  userns?: IdMapping;
}

/** One ID range of a user namespace, as CRI's IDMapping. */
export interface IdMapping {
  hostId: number;
  containerId: number;
  length: number;
}

/**
 * The sandbox's and each container's namespace options: host network; a pod in a user namespace
 * has a network namespace of its own instead (containerd pins the user namespace through it:
 * the runtime needs a CNI configuration, test/helpers/cri/cni-stub.ts).
 */
export function namespaceOptions(userns: IdMapping | undefined): CriMessage {
  if (userns === undefined) return HOST_NETWORK;
  return { ...HOST_NETWORK, network: NamespaceMode.POD, usernsOptions: { mode: NamespaceMode.POD, uids: [userns], gids: [userns] } };
}

export interface PodLayout {
  uid: string;
  pod: Pod;
  /** PodSandboxConfig as the kubelet sends it. */
  config: CriMessage;
  /** Volume name → host directory (emptyDirs, atomic-writer volumes, CSI volumes' mount). */
  volumes: Map<string, string>;
  /** The tmpfs mounts made for the pod's volumes, which the kubelet unmounts when the pod goes. */
  tmpfsMounts: string[];
}

/** The pod directory and the PodSandboxConfig, before any CRI call (benchmarks time RunPodSandbox alone). */
export function layOutPod(kubeletRoot: string, o: Omit<PodOptions, 'handler'>): PodLayout {
  const uid = crypto.randomUUID();
  const namespace = o.namespace ?? 'default';
  const csi = Object.entries(o.csi ?? {});
  const pod = makePod(
    kubeletRoot,
    { emptyDirs: o.emptyDirs ?? {}, csi: csi.map(([name]) => ({ name, layout: 'unmounted' as const })) },
    uid,
  );
  const volumes = new Map<string, string>(Object.keys(o.emptyDirs ?? {}).map((v) => [v, pod.emptyDir(v)]));
  const tmpfsMounts: string[] = [];
  const tmpfs = (dir: string) => {
    fs.mkdirSync(dir, { recursive: true });
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=4m,mode=0755', 'tmpfs', dir]);
    tmpfsMounts.push(dir);
  };
  for (const [plugin, list] of [
    ['secret', o.secrets],
    ['projected', o.projected],
    ['configmap', o.configMaps],
  ] as const) {
    for (const [name, payload] of Object.entries(list ?? {})) {
      if (o.tmpfs && plugin !== 'configmap') tmpfs(atomicVolumeDir(pod, plugin, name));
      volumes.set(name, makeAtomicVolume(pod, plugin, name, payload));
    }
  }
  for (const [name, payload] of csi) {
    tmpfs(pod.csiMount(name));
    atomicWrite(pod.csiMount(name), payload);
    volumes.set(name, pod.csiMount(name));
  }
  const logDirectory = path.join(path.dirname(kubeletRoot), 'pod-logs', `${namespace}_${o.name}_${uid}`);
  fs.mkdirSync(logDirectory, { recursive: true });
  const labels = { 'io.kubernetes.pod.name': o.name, 'io.kubernetes.pod.namespace': namespace, 'io.kubernetes.pod.uid': uid };
  const config = {
    metadata: { name: o.name, uid, namespace, attempt: 0 },
    // no hostname: the kubelet sets none for a host-network pod (the node's UTS namespace)
    logDirectory,
    dnsConfig: {},
    labels,
    annotations: { 'kubernetes.io/config.source': 'api', ...o.annotations },
    linux: { securityContext: { namespaceOptions: namespaceOptions(o.userns) } },
  };
  return { uid, pod, config, volumes, tmpfsMounts };
}
