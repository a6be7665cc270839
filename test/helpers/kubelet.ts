// A pod directory laid out as the kubelet does, under a temporary kubelet root:
// <root>/pods/<uid>/{etc-hosts, containers/<name>/<id>, volumes/kubernetes.io~<plugin>/<name>/}.
import fs from 'node:fs';
import path from 'node:path';

export const POD_UID = '6f1c2a9e-3b4d-4e5f-8a7b-0c1d2e3f4a5b';

export interface PodLayout {
  /** emptyDir name → files (relative path → content). */
  emptyDirs?: Record<string, Record<string, string | Buffer>>;
}

export interface Pod {
  kubeletRoot: string;
  uid: string;
  dir: string;
  emptyDir(name: string): string;
  /**
   * The mounts the kubelet/CRI put in a container's config.json (etc-hosts, termination log);
   * `id` names the termination-log file (the kubelet takes a random one a container start).
   */
  mounts(container: string, id?: string): { destination: string; source: string; type: string; options: string[] }[];
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
  return {
    kubeletRoot,
    uid,
    dir,
    emptyDir,
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
        : { 'io.kubernetes.cri.container-name': container, 'io.kubernetes.cri.sandbox-uid': uid, 'io.kubernetes.cri.container-type': 'container' };
    },
  };
}
