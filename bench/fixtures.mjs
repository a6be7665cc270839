// Bench fixtures: the kubelet-like pod of scripts/kubelet-pod.ts (shared with the tests and the
// build) and an OCI bundle whose config.json points into it, as containerd would write them
// (docs/design.md#annotations, #finding-volumes):
//   <root>/pods/<uid>/etc-hosts, containers/app/<id>
//   <root>/pods/<uid>/volumes/kubernetes.io~empty-dir/config/*.env
//   <root>/pods/<uid>/volumes/kubernetes.io~projected/certs/{..<ts>/files, ..data → ..<ts>, name → ..data/name}
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { atomicVolumeDir, makePod as makeKubeletPod, rawAnnotations } from '../scripts/kubelet-pod.ts';

const BUSYBOX = ['/bin/busybox', '/usr/bin/busybox'].find((p) => fs.existsSync(p));

/** An env file of `count` variables `<prefix>NNNN='…'`, or filled up to about `bytes`. */
export function envFileText({ count, bytes, prefix = 'VAR_' }) {
  const lines = [];
  let size = 0;
  for (let i = 0; count !== undefined ? i < count : size < bytes - 48; i++) {
    const line = `${prefix}${String(i).padStart(5, '0')}='value-${i}-${'x'.repeat(16)}'\n`;
    lines.push(line);
    size += line.length;
  }
  return lines.join('');
}

/** The 7 variables the kubelet sets per service (2 service, 5 Docker-link), for `n` services. */
export function serviceEnv(n) {
  const env = ['KUBERNETES_SERVICE_HOST=10.96.0.1', 'KUBERNETES_SERVICE_PORT=443'];
  for (let i = 0; i < n; i++) {
    const s = `SVC_${i}`;
    const ip = `10.${96 + (i >> 16)}.${(i >> 8) & 255}.${i & 255}`;
    env.push(
      `${s}_SERVICE_HOST=${ip}`,
      `${s}_SERVICE_PORT=80`,
      `${s}_PORT=tcp://${ip}:80`,
      `${s}_PORT_80_TCP=tcp://${ip}:80`,
      `${s}_PORT_80_TCP_PROTO=tcp`,
      `${s}_PORT_80_TCP_PORT=80`,
      `${s}_PORT_80_TCP_ADDR=${ip}`,
    );
  }
  return env;
}

/**
 * A pod under `<root>/pods/<uid>` (the shared kubelet-like fixture, scripts/kubelet-pod.ts):
 * emptyDir `config` holding `envFiles` (name → text) and projected volume `certs` with
 * `projectedFiles` flat files, laid out by the atomic writer.
 */
export function makePod(root, { envFiles = {}, projectedFiles = 0 } = {}) {
  const payload = {};
  for (let i = 0; i < projectedFiles; i++) payload[`file-${String(i).padStart(5, '0')}.pem`] = `-----BEGIN CERTIFICATE ${i}-----\n`;
  const pod = makeKubeletPod(root, { emptyDirs: { config: envFiles }, atomic: [{ plugin: 'projected', name: 'certs', payload }] });
  const dir = atomicVolumeDir(pod, 'projected', 'certs');
  return {
    ...pod,
    root,
    emptyDir: pod.emptyDir('config'),
    projected: { dir, data: path.join(dir, fs.readlinkSync(path.join(dir, '..data'))) },
  };
}

/**
 * Where bundles go. containerd and CRI-O keep them on tmpfs (/run/containerd/..., /run/containers/
 * storage/...), where the two fsyncs of config.json's atomic rewrite cost nothing; on this
 * machine's disk they cost several ms under load. run.mjs points this at a tmpfs directory
 * (BENCH_BUNDLE_DIR, default under /dev/shm); a fixture given `onDisk` keeps its bundle in the
 * work directory instead (row 1 shows both).
 */
let bundleBase;
export function setBundleBase(dir) {
  bundleBase = dir;
}
export function bundleDir(root, { onDisk = false } = {}) {
  if (onDisk || !bundleBase) return path.join(root, 'bundle');
  return path.join(bundleBase, root.replace(/[^A-Za-z0-9._-]+/g, '_'), 'bundle');
}

/** A busybox-static rootfs (for runc rows). */
export function makeRootfs(dir) {
  if (!BUSYBOX) throw new Error('busybox-static not installed');
  for (const d of ['bin', 'proc', 'dev', 'sys', 'tmp', 'etc', 'certs']) fs.mkdirSync(path.join(dir, d), { recursive: true });
  fs.copyFileSync(BUSYBOX, path.join(dir, 'bin/busybox'));
  fs.chmodSync(path.join(dir, 'bin/busybox'), 0o755);
  for (const a of ['sh', 'true', 'sleep']) fs.symlinkSync('busybox', path.join(dir, 'bin', a));
  fs.writeFileSync(path.join(dir, 'etc/hosts'), '');
  return dir;
}

/**
 * `<dir>/config.json` from `runc spec` for container `app` of the pod, with the annotations
 * given (values JSON-encoded), the kubelet's mounts and `env`. Returns a restore function.
 */
export function makeBundle(dir, pod, { rootfs, args = ['/bin/true'], env = [], annotations = {} }) {
  fs.mkdirSync(dir, { recursive: true });
  execFileSync('runc', ['spec', '--bundle', dir]);
  const file = path.join(dir, 'config.json');
  const spec = JSON.parse(fs.readFileSync(file, 'utf8'));
  spec.root = { path: rootfs ?? path.join(dir, 'rootfs'), readonly: false };
  Object.assign(spec.process, { terminal: false, args, env: ['PATH=/bin', 'HOME=/', ...env] });
  spec.mounts.push(...pod.mounts('app'), { destination: '/certs', source: pod.projected.dir, type: 'bind', options: ['rbind', 'ro'] });
  spec.annotations = { ...pod.annotations('app'), ...rawAnnotations(annotations) };
  const text = JSON.stringify(spec, null, '\t');
  fs.writeFileSync(file, text);
  return () => fs.writeFileSync(file, text);
}

/** Resets the owner of every data file (the work `inject` redoes on each run). */
export function resetOwners(pod) {
  for (const name of fs.readdirSync(pod.projected.data)) fs.lchownSync(path.join(pod.projected.data, name), 0, 0);
}

/** The typical pod: 10 fileKeyRefs, 2 envFrom files of 50, service links off, 100 files. */
export function typicalPod(root, { services = 50, rootfs, onDisk = false } = {}) {
  const keys = envFileText({ count: 10, prefix: 'KEY_' });
  const pod = makePod(root, {
    envFiles: { 'keys.env': keys, 'a.env': envFileText({ count: 50 }), 'b.env': envFileText({ count: 50 }) },
    projectedFiles: 100,
  });
  const env = Array.from({ length: 10 }, (_, i) => ({
    name: `FROM_FILE_${i}`,
    valueFrom: { fileKeyRef: { volumeName: 'config', path: 'keys.env', key: `KEY_${String(i).padStart(5, '0')}` } },
  }));
  env.push({ name: 'GREETING', value: 'hello $(FROM_FILE_0) $$HOME' });
  const annotations = {
    'envhook.io/env': { app: env },
    'envhook.io/envFrom': {
      app: [
        { prefix: 'A_', fileRef: { volumeName: 'config', path: 'a.env' } },
        { prefix: 'B_', fileRef: { volumeName: 'config', path: 'b.env' } },
      ],
    },
    'envhook.io/serviceLinks': { app: false },
    'envhook.io/volumeOwners': [{ volume: 'certs', defaultUser: 1000, items: [{ path: 'file-00000.pem', user: 0 }] }],
  };
  const bundle = bundleDir(root, { onDisk });
  const restore = makeBundle(bundle, pod, { rootfs, env: serviceEnv(services), annotations });
  return { pod, bundle, restore };
}
