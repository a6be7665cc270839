// containerd 1.6 (Debian's, a private instance) → runc v2 shim → hooks/envhook-runtime → runc, driven by
// `ctr run --rootfs --runc-binary`, with a kubelet-like pod: the injected variables show in
// the container, and a failing create reaches ctr's error text through runc's --log file.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { missingForRunc, parseEnvOutput, RUNC } from '../helpers/bundle.ts';
import { missingForContainerd, startContainerd, type Containerd } from '../helpers/shim/containerd.ts';
import { envhookWrapper, FRONT } from '../helpers/shim/front.ts';
import { sharedRootfs } from '../helpers/shim/inject.ts';
import { CANARY, checkInjected, ENV_ANNOTATIONS, FAILING_ANNOTATIONS, FAILING_MESSAGE, FILES, raw } from '../helpers/shim/injected.ts';
import { makePod, type Pod } from '../../scripts/kubelet-pod.ts';

const missing = missingForRunc() ?? missingForContainerd();
let containerd: Containerd;
let pod: Pod;
let envhookLog: string;
let n = 0;

if (!missing) {
  t.before(async () => {
    const dir = t.testdir({ 'envhook.json': '{}' });
    pod = makePod(path.join(dir, 'kubelet'), { emptyDirs: { config: FILES } });
    envhookLog = path.join(dir, 'envhook.log');
    // containerd's environment is the front's: containerd → runc v2 shim → the front.
    containerd = await startContainerd({
      ...process.env,
      ENVHOOK_CONFIG: path.join(dir, 'envhook.json'),
      ENVHOOK_BIN: envhookWrapper(path.join(dir, 'bin')),
      ENVHOOK_RUNTIME: RUNC!,
      ENVHOOK_KUBELET_ROOT: pod.kubeletRoot,
      ENVHOOK_LOG_FILE: envhookLog,
    });
  });
  t.teardown(() => containerd?.stop());
}

/** `ctr run --rm --rootfs --runc-binary FRONT --mount <kubelet mounts> --annotation … ROOTFS ID /bin/env` */
function ctrRun(annotations: Record<string, string>) {
  const args = ['run', '--rm', '--rootfs', '--runc-binary', FRONT, '--env', 'PATH=/bin'];
  for (const m of pod.mounts('app')) args.push('--mount', `type=bind,src=${m.source},dst=${m.destination},options=${m.options.join(':')}`);
  for (const [k, v] of Object.entries(annotations)) args.push('--annotation', `${k}=${v}`);
  return containerd.ctr([...args, sharedRootfs(), `envhook-e2e-${process.pid}-${++n}`, '/bin/env']);
}

t.test('ctr run through the front: the injected variables inside the container', { skip: missing }, async (t) => {
  const r = ctrRun({ ...pod.annotations('app', 'containerd'), ...raw(ENV_ANNOTATIONS) });
  t.equal(r.status, 0, r.stderr);
  checkInjected(t, parseEnvOutput(r.stdout));
  const log = fs.readFileSync(envhookLog, 'utf8');
  t.match(log, /"bundle":"[^"]+\/io\.containerd\.runtime\.v2\.task\/default\/envhook-e2e-[^"]+","container":"app"/);
  t.notMatch(log, /HELLO|CANARY/);
});

t.test("a failing create: ctr fails with envhook's own message (from the --log line)", { skip: missing }, async (t) => {
  const r = ctrRun({ ...pod.annotations('app', 'containerd'), ...raw(FAILING_ANNOTATIONS) });
  t.equal(r.status, 1);
  t.equal(r.stdout, '');
  t.equal(r.stderr, `ctr: failed to create shim task: OCI runtime create failed: envhook: ${FAILING_MESSAGE}: unknown\n`);
  t.notMatch(r.stderr, CANARY);
  t.equal(containerd.ctr(['containers', 'ls', '-q']).stdout, '', 'no container left');
});

t.test('sandbox containers pass through', { skip: missing }, async (t) => {
  const r = ctrRun({ ...pod.annotations('app', 'containerd'), 'io.kubernetes.cri.container-type': 'sandbox', ...raw(FAILING_ANNOTATIONS) });
  t.equal(r.status, 0, r.stderr);
  t.notOk(parseEnvOutput(r.stdout).has('A'));
});
