// containerd (a private instance) → runc v2 shim → hooks/envhook-runtime → runc, driven by
// `ctr run --rootfs --runc-binary`. A failing create reaches ctr's error text through the
// runtime's --log file.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { makeRootfs, parseEnvOutput, RUNC } from '../helpers/bundle.ts';
import { missingForContainerd, startContainerd, type Containerd } from '../helpers/containerd.ts';
import { envhookWrapper, FRONT } from '../helpers/front.ts';
import { missingForRunc } from '../helpers/bundle.ts';

const missing = missingForRunc() ?? missingForContainerd();
let containerd: Containerd;
let rootfs: string;
let envhookLog: string;
let n = 0;

if (!missing) {
  t.before(async () => {
    const dir = t.testdir({ 'envhook.json': '{}' });
    rootfs = makeRootfs(path.join(dir, 'rootfs'));
    envhookLog = path.join(dir, 'envhook.log');
    containerd = await startContainerd({
      ...process.env,
      ENVHOOK_CONFIG: path.join(dir, 'envhook.json'),
      ENVHOOK_BIN: envhookWrapper(path.join(dir, 'bin')),
      ENVHOOK_RUNTIME: RUNC!,
      ENVHOOK_LOG_FILE: envhookLog,
    });
  });
  t.teardown(() => containerd?.stop());
}

/** `ctr run --rm --rootfs … --runc-binary FRONT --annotation … ROOTFS ID CMD…` */
function ctrRun(annotations: Record<string, string>, cmd: string[] = ['/bin/env']) {
  const args = ['run', '--rm', '--rootfs', '--runc-binary', FRONT, '--env', 'PATH=/bin'];
  for (const [k, v] of Object.entries(annotations)) args.push('--annotation', `${k}=${v}`);
  return containerd.ctr([...args, rootfs, `envhook-e2e-${process.pid}-${++n}`, ...cmd]);
}

t.test('ctr run through the front: the container runs, envhook ran on its bundle', { skip: missing }, async (t) => {
  const r = ctrRun({ 'io.kubernetes.cri.container-name': 'app' });
  t.equal(r.status, 0, r.stderr);
  t.equal(parseEnvOutput(r.stdout).get('PATH'), '/bin');
  t.match(fs.readFileSync(envhookLog, 'utf8'), /"bundle":"[^"]+\/io\.containerd\.runtime\.v2\.task\/default\/envhook-e2e-[^"]+","container":"app"/);
});

t.test('a failing create: ctr fails with envhook\'s own message (from the --log line)', { skip: missing }, async (t) => {
  const r = ctrRun({ 'io.kubernetes.cri.container-name': 'app', 'envhook.io/env': '{"app":[{"name":"A","value":"CANARY_ctr"}]}', 'envhook.io/volumeOwners': '[]' });
  t.equal(r.status, 1);
  t.equal(r.stdout, '');
  t.match(r.stderr, /^ctr: failed to create shim task: OCI runtime create failed: envhook: [^\n]+: unknown\n$/);
  t.notMatch(r.stderr, /CANARY/);
  t.equal(containerd.ctr(['containers', 'ls', '-q']).stdout, '', 'no container left');
});

t.test('sandbox containers pass through', { skip: missing }, async (t) => {
  const r = ctrRun({ 'io.kubernetes.cri.container-type': 'sandbox', 'envhook.io/env': '{"app":[{"name":"A","value":"b"}]}' });
  t.equal(r.status, 0, r.stderr);
  t.notOk(parseEnvOutput(r.stdout).has('A'));
});
