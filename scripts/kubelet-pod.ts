// One kubelet-like pod fixture for the tests, the benchmarks, the build's code-cache training
// run (scripts/sea-training.mjs) and the example (examples/bundle/make-config.mjs): a pod
// directory laid out as the kubelet lays it out, under a kubelet root of the caller's:
//   <root>/pods/<uid>/etc-hosts
//   <root>/pods/<uid>/containers/<name>/<id>                 (termination log)
//   <root>/pods/<uid>/volumes/kubernetes.io~empty-dir/<name>/
//   <root>/pods/<uid>/volumes/kubernetes.io~<plugin>/<name>/ (atomic writer: see atomicWrite)
// with the mounts and runtime annotations a CRI runtime puts in the container's config.json.
// TypeScript with erasable syntax only: Node 24 runs it from .mjs scripts as well.
import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';

export const POD_UID = '6f1c2a9e-3b4d-4e5f-8a7b-0c1d2e3f4a5b';

export type Projection = string | Buffer | { data: string | Buffer; mode?: number; uid?: number };
export type Plugin = 'configmap' | 'secret' | 'projected' | 'downward-api';

export interface PodLayout {
  /** emptyDir name → files (relative path → content). */
  emptyDirs?: Record<string, Record<string, string | Buffer>>;
  /** Volumes written by the kubelet's atomic writer. */
  atomic?: { plugin: Plugin; name: string; payload: Record<string, Projection> }[];
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
  /** The mounts the kubelet/CRI put in a container's config.json (etc-hosts, termination log). */
  mounts(container: string): Mount[];
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
  return {
    kubeletRoot,
    uid,
    dir,
    emptyDir,
    mounts(container) {
      const term = path.join(dir, 'containers', container, 'd0c0ffee');
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

/** Annotation values as the runtime carries them: objects JSON-encoded, strings as they are. */
export function rawAnnotations(annotations: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(Object.entries(annotations).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]));
}

// The kubelet's atomic writer (pkg/volume/util/atomic_writer.go), updates included:
//   ..2026_11_22_03_20_00.123456789/   the real files (mode as given; nested dirs 0755)
//   ..data -> ..2026_11_22_03_20_00.123456789
//   <top-level name> -> ..data/<top-level name>
// An update writes a new timestamped dir, points `..data_tmp` at it, renames it over `..data`,
// removes visible links no longer in the payload, then the old timestamped dir.
/** `..2006_01_02_15_04_05.<random digits>` as Go's time format and os.MkdirTemp make it. */
export function timestampedName(now = new Date()): string {
  const p = (n: number) => String(n).padStart(2, '0');
  const ts = `${now.getUTCFullYear()}_${p(now.getUTCMonth() + 1)}_${p(now.getUTCDate())}_${p(now.getUTCHours())}_${p(now.getUTCMinutes())}_${p(now.getUTCSeconds())}`;
  return `..${ts}.${crypto.randomInt(1e9)}`;
}

/** Writes `payload` (visible path → content) into `target`; returns the timestamped dir's path. */
export function atomicWrite(target: string, payload: Record<string, Projection>): string {
  fs.mkdirSync(target, { recursive: true });
  const dataLink = path.join(target, '..data');
  const oldTs = fs.lstatSync(dataLink, { throwIfNoEntry: false }) ? fs.readlinkSync(dataLink) : undefined;
  let tsName = timestampedName();
  while (fs.existsSync(path.join(target, tsName))) tsName = timestampedName();
  const tsDir = path.join(target, tsName);
  fs.mkdirSync(tsDir, { mode: 0o755 });
  fs.chmodSync(tsDir, 0o755);
  for (const [rel, proj] of Object.entries(payload)) {
    if (path.isAbsolute(rel) || rel.split('/').includes('..') || rel.startsWith('..')) throw new Error(`invalid path ${rel}`);
    const { data, mode = 0o644, uid } = typeof proj === 'string' || Buffer.isBuffer(proj) ? { data: proj } : proj;
    const file = path.join(tsDir, rel);
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o777 });
    fs.writeFileSync(file, data);
    fs.chmodSync(file, mode);
    if (uid !== undefined) fs.chownSync(file, uid, 0);
  }
  const visible = new Set(Object.keys(payload).map((rel) => rel.split('/')[0]!));
  for (const name of visible) {
    const link = path.join(target, name);
    if (!fs.lstatSync(link, { throwIfNoEntry: false })) fs.symlinkSync(path.join('..data', name), link);
  }
  const tmpLink = path.join(target, '..data_tmp');
  fs.symlinkSync(tsName, tmpLink);
  fs.renameSync(tmpLink, dataLink);
  if (oldTs !== undefined) {
    for (const name of fs.readdirSync(path.join(target, oldTs))) {
      if (!visible.has(name)) fs.rmSync(path.join(target, name), { force: true });
    }
    fs.rmSync(path.join(target, oldTs), { recursive: true, force: true });
  }
  return tsDir;
}

/** The host directory of atomic-write volume `name` of `pod` (the kubelet's plugin dir). */
export function atomicVolumeDir(pod: Pick<Pod, 'dir'>, plugin: Plugin, name: string): string {
  return path.join(pod.dir, 'volumes', `kubernetes.io~${plugin}`, name);
}

/** Creates the volume as the kubelet would, with files owned by root; returns its directory. */
export function makeAtomicVolume(pod: Pick<Pod, 'dir'>, plugin: Plugin, name: string, payload: Record<string, Projection>): string {
  const dir = atomicVolumeDir(pod, plugin, name);
  fs.mkdirSync(dir, { recursive: true, mode: 0o755 });
  atomicWrite(dir, payload);
  return dir;
}
