// Writes <bundle>/config.json for a busybox container the way a CRI runtime would for a pod:
// starts from `runc spec`, read-only rootfs, the kubelet-made mounts (etc-hosts and the
// termination log, which is how envhook finds the pod directory), the runtime's container-name
// and pod-UID annotations, and the pod's envhook.io/* annotations.
//
// node make-config.mjs BUNDLE ROOTFS POD_DIR CONTAINER ANNOTATIONS_JSON [EMPTYDIR:DEST] -- ARGS...
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const sep = process.argv.indexOf('--');
const [bundle, rootfs, podDir, container, annotationsFile, emptyDir] = process.argv.slice(2, sep);
const args = process.argv.slice(sep + 1);
fs.mkdirSync(bundle, { recursive: true });
execFileSync('runc', ['spec', '--bundle', bundle]);
const file = path.join(bundle, 'config.json');
const spec = JSON.parse(fs.readFileSync(file, 'utf8'));
const uid = path.basename(podDir);
const term = path.join(podDir, 'containers', container, 'termination-log');
fs.mkdirSync(path.dirname(term), { recursive: true });
fs.writeFileSync(term, '');
spec.root = { path: path.resolve(rootfs), readonly: true };
spec.process.terminal = false;
spec.process.args = args;
spec.process.env = ['PATH=/bin', 'HOME=/', 'HOSTNAME=example'];
spec.mounts.push(
  { destination: '/etc/hosts', type: 'bind', source: path.join(podDir, 'etc-hosts'), options: ['rbind', 'ro'] },
  { destination: '/dev/termination-log', type: 'bind', source: term, options: ['rbind', 'rw'] },
);
if (emptyDir) {
  // Only the init container mounts the emptyDir: the main container gets its env file through envhook.
  const [name, dest] = emptyDir.split(':');
  spec.mounts.push({ destination: dest, type: 'bind', source: path.join(podDir, 'volumes/kubernetes.io~empty-dir', name), options: ['rbind', 'rw'] });
}
const pod = JSON.parse(fs.readFileSync(annotationsFile, 'utf8'));
spec.annotations = {
  'io.kubernetes.cri.container-type': 'container',
  'io.kubernetes.cri.container-name': container,
  'io.kubernetes.cri.sandbox-uid': uid,
  // Pod annotations are strings; envhook's carry JSON.
  ...Object.fromEntries(Object.entries(pod).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)])),
};
fs.writeFileSync(file, JSON.stringify(spec, null, '\t') + '\n');
