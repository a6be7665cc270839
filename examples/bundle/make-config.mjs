// Writes <bundle>/config.json for a busybox container the way a CRI runtime would for a pod:
// starts from `runc spec`, read-only rootfs, the kubelet-made mounts (etc-hosts and the
// termination log, which is how envhook finds the pod directory), the runtime's container-name
// and pod-UID annotations, and the pod's envhook.io/* annotations. The pod directory, mounts
// and annotations are those of the kubelet-like fixture the tests use (scripts/kubelet-pod.ts).
//
// node make-config.mjs BUNDLE ROOTFS POD_DIR CONTAINER ANNOTATIONS_JSON [EMPTYDIR:DEST] -- ARGS...
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { makePod, rawAnnotations } from '../../scripts/kubelet-pod.ts';

const sep = process.argv.indexOf('--');
const [bundle, rootfs, podDir, container, annotationsFile, emptyDir] = process.argv.slice(2, sep);
const args = process.argv.slice(sep + 1);
fs.mkdirSync(bundle, { recursive: true });
execFileSync('runc', ['spec', '--bundle', bundle]);
const file = path.join(bundle, 'config.json');
const spec = JSON.parse(fs.readFileSync(file, 'utf8'));
// <kubeletRoot>/pods/<uid>, with the emptyDir the container mounts, if any.
const [emptyName, emptyDest] = emptyDir ? emptyDir.split(':') : [];
const pod = makePod(path.dirname(path.dirname(path.resolve(podDir))), emptyName ? { emptyDirs: { [emptyName]: {} } } : {}, path.basename(podDir));
spec.root = { path: path.resolve(rootfs), readonly: true };
spec.process.terminal = false;
spec.process.args = args;
spec.process.env = ['PATH=/bin', 'HOME=/', 'HOSTNAME=example'];
spec.mounts.push(...pod.mounts(container));
if (emptyName) {
  // Only the init container mounts the emptyDir: the main container gets its env file through envhook.
  spec.mounts.push({ destination: emptyDest, type: 'bind', source: pod.emptyDir(emptyName), options: ['rbind', 'rw'] });
}
const podAnnotations = JSON.parse(fs.readFileSync(annotationsFile, 'utf8'));
// Pod annotations are strings; envhook's carry JSON.
spec.annotations = { ...pod.annotations(container), ...rawAnnotations(podAnnotations) };
fs.writeFileSync(file, JSON.stringify(spec, null, '\t') + '\n');
