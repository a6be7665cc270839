// A small kubelet-like pod (scripts/kubelet-pod.ts, the fixture the tests and the bench use)
// and OCI bundle for scripts/build-sea.mjs to run `envhook shim create` on once while it makes the
// single executable's code cache (the shape of bench/fixtures.mjs's typical pod, without runc:
// a minimal config.json). Returns the arguments and environment of the front's `envhook shim create`.
import fs from 'node:fs';
import path from 'node:path';
import { atomicVolumeDir, makePod, rawAnnotations } from './kubelet-pod.ts';

export function makeTrainingPod(root) {
  const envText = (prefix, n) => Array.from({ length: n }, (_, i) => `${prefix}${i}='value-${i}'\n`).join('');
  const pod = makePod(root, {
    emptyDirs: { config: { 'keys.env': envText('KEY_', 2), 'a.env': envText('VAR_', 5) } },
    atomic: [{ plugin: 'projected', name: 'certs', payload: { 'a.pem': 'x\n', 'b.pem': 'x\n' } }],
  });
  const bundle = path.join(root, 'bundle');
  fs.mkdirSync(bundle);
  const annotations = {
    'envhook.io/env': {
      app: [
        { name: 'FROM_FILE', valueFrom: { fileKeyRef: { volumeName: 'config', path: 'keys.env', key: 'KEY_0' } } },
        { name: 'GREETING', value: 'hello $(FROM_FILE) $$HOME' },
      ],
    },
    'envhook.io/envFrom': { app: [{ prefix: 'A_', fileRef: { volumeName: 'config', path: 'a.env' } }] },
    'envhook.io/serviceLinks': { app: false },
    'envhook.io/volumeOwners': [{ volume: 'certs', defaultUser: process.getuid(), items: [{ path: 'a.pem', user: process.getuid() }] }],
  };
  const spec = {
    ociVersion: '1.0.2',
    process: {
      terminal: false,
      user: { uid: 0, gid: 0 },
      args: ['/bin/true'],
      cwd: '/',
      env: [
        'PATH=/bin',
        'HOME=/',
        'KUBERNETES_SERVICE_HOST=10.96.0.1',
        'KUBERNETES_SERVICE_PORT=443',
        'WEB_SERVICE_HOST=10.96.0.2',
        'WEB_SERVICE_PORT=80',
        'WEB_PORT=tcp://10.96.0.2:80',
        'WEB_PORT_80_TCP=tcp://10.96.0.2:80',
        'WEB_PORT_80_TCP_PROTO=tcp',
        'WEB_PORT_80_TCP_PORT=80',
        'WEB_PORT_80_TCP_ADDR=10.96.0.2',
      ],
    },
    root: { path: 'rootfs', readonly: false },
    hostname: 'app',
    mounts: [
      { destination: '/proc', type: 'proc', source: 'proc' },
      ...pod.mounts('app'),
      { destination: '/certs', source: atomicVolumeDir(pod, 'projected', 'certs'), type: 'bind', options: ['rbind', 'ro'] },
    ],
    linux: { namespaces: [{ type: 'pid' }, { type: 'mount' }] },
    annotations: { ...pod.annotations('app'), ...rawAnnotations(annotations) },
  };
  fs.writeFileSync(path.join(bundle, 'config.json'), JSON.stringify(spec, null, '\t'));
  fs.writeFileSync(path.join(root, 'config.json'), '{}\n');
  // The runtime front's create, the path every annotated container start takes on a node, with
  // a log file as an admin sets one (the logger's code in the cache too: without it a create
  // that logs to a file spent CPU compiling pino at every start). inject shares the pipeline.
  const env = {
    ENVHOOK_CONFIG: path.join(root, 'config.json'),
    ENVHOOK_KUBELET_ROOT: root,
    ENVHOOK_RUNTIME: fs.realpathSync('/bin/true'),
    ENVHOOK_LOG_FILE: path.join(root, 'envhook.log'),
    ENVHOOK_LOG_LEVEL: 'debug',
    ENVHOOK_RUN_DIR: path.join(root, 'run'),
  };
  return { argv: ['shim', 'create', '--bundle', bundle, 'training'], env };
}
