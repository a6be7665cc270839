// One kubelet-like pod fixture for the tests, the benchmarks, the build's code-cache training
// run (scripts/sea-training.mjs) and the example (examples/bundle/make-config.mjs): a pod
// directory laid out as the kubelet lays it out, under a kubelet root of the caller's:
//   <root>/pods/<uid>/etc-hosts
//   <root>/pods/<uid>/containers/<name>/<id>                 (termination log)
//   <root>/pods/<uid>/volumes/kubernetes.io~empty-dir/<name>/
//   <root>/pods/<uid>/volumes/kubernetes.io~<plugin>/<name>/ (atomic writer: scripts/atomic-writer.ts)
//   <root>/pods/<uid>/volumes/kubernetes.io~csi/<name>/{vol_data.json,mount/} (inline CSI volume)
// with the mounts and runtime annotations a CRI runtime puts in the container's config.json.
// TypeScript with erasable syntax only: Node 24 runs it from .mjs scripts as well.
import fs from 'node:fs';
import path from 'node:path';
import { atomicWrite, makeAtomicVolume, type Plugin, type Projection } from './atomic-writer.ts';

export { atomicVolumeDir, atomicWrite, atomicWriteSteps, makeAtomicVolume, timestampedName } from './atomic-writer.ts';
export type { Plugin, Projection, WriteHooks, WriteStep } from './atomic-writer.ts';

export const POD_UID = '6f1c2a9e-3b4d-4e5f-8a7b-0c1d2e3f4a5b';

export interface PodLayout {
  /** emptyDir name → files (relative path → content). */
  emptyDirs?: Record<string, Record<string, string | Buffer>>;
  /** Volumes written by the kubelet's atomic writer. */
  atomic?: { plugin: Plugin; name: string; payload: Record<string, Projection> }[];
  /**
   * Inline CSI volumes: the kubelet's vol_data.json beside `mount`, where the driver puts its
   * files: through the atomic writer ('atomic', as the secrets-store driver writes them), as
   * plain files ('plain'), or not at all ('unmounted': the driver has not mounted it, or failed).
   */
  csi?: { name: string; layout: 'atomic' | 'plain' | 'unmounted'; files?: Record<string, Projection> }[];
}

// A type, not an interface: it must fit the JSON value type of a spec's mounts.
export type Mount = {
  destination: string;
  source: string;
  type: string;
  options: string[];
};

export interface Pod {
  kubeletRoot: string;
  uid: string;
  dir: string;
  emptyDir(name: string): string;
  /** The `mount` directory of inline CSI volume `name`. */
  csiMount(name: string): string;
  /**
   * The mounts the kubelet/CRI put in a container's config.json (etc-hosts, termination log);
   * `id` names the termination-log file (the kubelet takes a random one a container start).
   */
  mounts(container: string, id?: string): Mount[];
  /** The runtime annotations CRI-O ('crio') or containerd ('containerd') add for a container. */
  annotations(container: string, runtime?: 'crio' | 'containerd'): Record<string, string>;
}

export function makePod(kubeletRoot: string, layout: PodLayout = {}, uid = POD_UID): Pod {
  const dir = path.join(kubeletRoot, 'pods', uid);
  fs.mkdirSync(path.join(dir, 'volumes'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'etc-hosts'), '127.0.0.1 localhost\n');
  const emptyDir = (name: string) => path.join(dir, 'volumes/kubernetes.io~empty-dir', name);
  for (const [name, files] of Object.entries(layout.emptyDirs ?? {})) {
    for (const [rel, content] of Object.entries(files)) {
      const file = path.join(emptyDir(name), rel);
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, content);
    }
    fs.mkdirSync(emptyDir(name), { recursive: true });
  }
  for (const v of layout.atomic ?? []) makeAtomicVolume({ dir }, v.plugin, v.name, v.payload);
  const csiMount = (name: string) => path.join(dir, 'volumes/kubernetes.io~csi', name, 'mount');
  for (const v of layout.csi ?? []) makeCsiVolume(csiMount(v.name), uid, v.name, v.layout, v.files ?? {});
  return {
    kubeletRoot,
    uid,
    dir,
    emptyDir,
    csiMount,
    mounts(container, id = 'd0c0ffee') {
      const term = path.join(dir, 'containers', container, id);
      fs.mkdirSync(path.dirname(term), { recursive: true });
      fs.writeFileSync(term, '');
      return [
        { destination: '/etc/hosts', source: path.join(dir, 'etc-hosts'), type: 'bind', options: ['rbind', 'ro'] },
        { destination: '/dev/termination-log', source: term, type: 'bind', options: ['rbind', 'rw'] },
      ];
    },
    annotations(container, runtime = 'containerd'): Record<string, string> {
      return runtime === 'crio'
        ? { 'io.kubernetes.container.name': container, 'io.kubernetes.pod.uid': uid, 'io.kubernetes.cri-o.ContainerType': 'container' }
        : {
            'io.kubernetes.cri.container-name': container,
            'io.kubernetes.cri.sandbox-uid': uid,
            'io.kubernetes.cri.container-type': 'container',
          };
    },
  };
}

function makeCsiVolume(
  mount: string,
  uid: string,
  name: string,
  layout: 'atomic' | 'plain' | 'unmounted',
  files: Record<string, Projection>,
): void {
  fs.mkdirSync(path.dirname(mount), { recursive: true });
  // What the kubelet's csi plugin records for an inline volume (csi_mounter.go, SetUpAt).
  const volData = {
    driverName: 'secrets-store.csi.k8s.io',
    specVolID: name,
    volumeHandle: `csi-${uid}-${name}`,
    volumeLifecycleMode: 'Ephemeral',
  };
  fs.writeFileSync(path.join(path.dirname(mount), 'vol_data.json'), JSON.stringify(volData));
  if (layout === 'unmounted') return;
  fs.mkdirSync(mount, { mode: 0o750 });
  if (layout === 'atomic') {
    atomicWrite(mount, files);
    return;
  }
  for (const [rel, proj] of Object.entries(files)) {
    const file = path.join(mount, rel);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, typeof proj === 'string' || Buffer.isBuffer(proj) ? proj : proj.data);
  }
}

/** Annotation values as the runtime carries them: objects JSON-encoded, strings as they are. */
export function rawAnnotations(annotations: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(Object.entries(annotations).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]));
}
