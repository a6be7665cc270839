// A small kubelet-like pod and OCI bundle for scripts/build-sea.mjs to run `envhook inject` on
// once while it makes the single executable's code cache (the layout of bench/fixtures.mjs's
// typical pod, without runc: a minimal config.json). Returns inject's arguments.
import fs from 'node:fs';
import path from 'node:path';

const UID = '0b3e7c1a-5d2f-4a6b-9c8d-7e6f5a4b3c2d';
const TS_DIR = '..2026_01_01_00_00_00.123456789';

export function makeTrainingPod(root) {
  const pod = path.join(root, 'pods', UID);
  const config = path.join(pod, 'volumes/kubernetes.io~empty-dir/config');
  fs.mkdirSync(config, { recursive: true });
  fs.writeFileSync(path.join(pod, 'etc-hosts'), '127.0.0.1 localhost\n');
  const envText = (prefix, n) => Array.from({ length: n }, (_, i) => `${prefix}${i}='value-${i}'\n`).join('');
  fs.writeFileSync(path.join(config, 'keys.env'), envText('KEY_', 2));
  fs.writeFileSync(path.join(config, 'a.env'), envText('VAR_', 5));
  const certs = path.join(pod, 'volumes/kubernetes.io~projected/certs');
  fs.mkdirSync(path.join(certs, TS_DIR), { recursive: true });
  for (const name of ['a.pem', 'b.pem']) {
    fs.writeFileSync(path.join(certs, TS_DIR, name), 'x\n');
    fs.symlinkSync(`..data/${name}`, path.join(certs, name));
  }
  fs.symlinkSync(TS_DIR, path.join(certs, '..data'));
  const bundle = path.join(root, 'bundle');
  fs.mkdirSync(bundle);
  const annotations = {
    'envhook.io/env': { app: [
      { name: 'FROM_FILE', valueFrom: { fileKeyRef: { volumeName: 'config', path: 'keys.env', key: 'KEY_0' } } },
      { name: 'GREETING', value: 'hello $(FROM_FILE) $$HOME' },
    ] },
    'envhook.io/envFrom': { app: [{ prefix: 'A_', fileRef: { volumeName: 'config', path: 'a.env' } }] },
    'envhook.io/serviceLinks': { app: false },
    'envhook.io/volumeOwners': [{ volume: 'certs', defaultUser: process.getuid(), items: [{ path: 'a.pem', user: process.getuid() }] }],
  };
  const spec = {
    ociVersion: '1.0.2',
    process: { terminal: false, user: { uid: 0, gid: 0 }, args: ['/bin/true'], cwd: '/',
      env: ['PATH=/bin', 'HOME=/', 'KUBERNETES_SERVICE_HOST=10.96.0.1', 'KUBERNETES_SERVICE_PORT=443', 'WEB_SERVICE_HOST=10.96.0.2', 'WEB_SERVICE_PORT=80', 'WEB_PORT=tcp://10.96.0.2:80', 'WEB_PORT_80_TCP=tcp://10.96.0.2:80', 'WEB_PORT_80_TCP_PROTO=tcp', 'WEB_PORT_80_TCP_PORT=80', 'WEB_PORT_80_TCP_ADDR=10.96.0.2'] },
    root: { path: 'rootfs', readonly: false },
    hostname: 'app',
    mounts: [
      { destination: '/proc', type: 'proc', source: 'proc' },
      { destination: '/etc/hosts', source: path.join(pod, 'etc-hosts'), type: 'bind', options: ['rbind', 'ro'] },
      { destination: '/certs', source: certs, type: 'bind', options: ['rbind', 'ro'] },
    ],
    linux: { namespaces: [{ type: 'pid' }, { type: 'mount' }] },
    annotations: {
      'io.kubernetes.cri.container-type': 'container',
      'io.kubernetes.cri.container-name': 'app',
      'io.kubernetes.cri.sandbox-uid': UID,
      ...Object.fromEntries(Object.entries(annotations).map(([k, v]) => [k, JSON.stringify(v)])),
    },
  };
  fs.writeFileSync(path.join(bundle, 'config.json'), JSON.stringify(spec, null, '\t'));
  return ['inject', '--bundle', bundle, '--kubelet-root', root];
}
