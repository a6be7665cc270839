// The exec bug (docs/design.md#the-runtime-front), with a real containerd 1.6: `ctr task exec` (like CRI ExecSync: kubectl exec,
// exec probes) builds the exec process from containerd's own stored spec, never from the
// bundle's config.json, and hands it to the runtime as `runc exec --process F`. Through the
// front the exec'd process sees the injected variables, without the removed service links;
// an exec into a container envhook did not change starts no Node.
import t from 'tap';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { missingForRunc, parseEnvOutput, RUNC } from '../helpers/bundle.ts';
import { missingForContainerd, startContainerd, type Containerd } from '../helpers/shim/containerd.ts';
import { countingEnvhook, FRONT } from '../helpers/shim/front.ts';
import { sharedRootfs } from '../helpers/shim/inject.ts';
import { CANARY, checkInjected, ENV_ANNOTATIONS, FILES, raw } from '../helpers/shim/injected.ts';
import { makePod, type Pod } from '../../scripts/kubelet-pod.ts';
import { EXEC_SIDECAR } from '../../src/bundle/exec-sidecar.ts';
import { sleep } from '../helpers/wait.ts';

const missing = missingForRunc() ?? missingForContainerd();
let containerd: Containerd;
let pod: Pod;
let envhookLog: string;
let counting: ReturnType<typeof countingEnvhook>;
const running: string[] = [];
let n = 0;
let dir: string;

if (!missing) {
  t.before(async () => {
    // Outside tap's test directory, which is removed before the teardown stops the tasks.
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'envhook-exec-'));
    fs.writeFileSync(path.join(dir, 'envhook.json'), '{}');
    pod = makePod(path.join(dir, 'kubelet'), { emptyDirs: { config: FILES } });
    envhookLog = path.join(dir, 'envhook.log');
    counting = countingEnvhook(path.join(dir, 'envhook'));
    containerd = await startContainerd({
      ...process.env,
      ENVHOOK_CONFIG: path.join(dir, 'envhook.json'),
      ENVHOOK_BIN: counting.bin,
      ENVHOOK_RUNTIME: RUNC!,
      ENVHOOK_KUBELET_ROOT: pod.kubeletRoot,
      ENVHOOK_LOG_FILE: envhookLog,
      ENVHOOK_LOG_LEVEL: 'debug',
    });
  });
  t.teardown(async () => {
    for (const id of running) {
      containerd.ctr(['task', 'kill', '-s', 'SIGKILL', id]);
      for (let i = 0; i < 100 && containerd.ctr(['task', 'delete', id]).status !== 0; i++) await sleep(50);
      containerd.ctr(['containers', 'delete', id]);
    }
    await containerd?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });
}

/** `ctr run -d` of `sleep 300` through the front, with the kubelet's mounts and these annotations. */
function ctrStart(annotations: Record<string, string>): string {
  const id = `envhook-exec-${process.pid}-${++n}`;
  const args = [
    'run',
    '-d',
    '--rootfs',
    '--runc-binary',
    FRONT,
    '--env',
    'PATH=/bin',
    '--env',
    'REDIS_MASTER_SERVICE_HOST=10.0.0.7',
    '--env',
    'REDIS_MASTER_PORT=tcp://10.0.0.7:6379',
    '--env',
    'KUBERNETES_SERVICE_HOST=10.0.0.1',
  ];
  for (const m of pod.mounts('app')) args.push('--mount', `type=bind,src=${m.source},dst=${m.destination},options=${m.options.join(':')}`);
  for (const [k, v] of Object.entries(annotations)) args.push('--annotation', `${k}=${v}`);
  const r = containerd.ctr([...args, sharedRootfs(), id, '/bin/sleep', '300']);
  if (r.status !== 0) throw new Error(`ctr run: ${r.stderr}`);
  running.push(id);
  return id;
}

t.test('ctr task exec into an envhook container sees the env; the removed service links stay removed', { skip: missing }, async (t) => {
  const id = ctrStart({
    ...pod.annotations('app', 'containerd'),
    ...raw({ ...ENV_ANNOTATIONS, 'envhook.io/serviceLinks': { '*': false } }),
  });
  const created = fs
    .readFileSync(envhookLog, 'utf8')
    .split('\n')
    .find((l) => l.includes(`"id":"${id}"`) && l.includes('"msg":"applied; runtime next"'));
  const bundle = JSON.parse(created ?? '{}').bundle as string;
  t.ok(fs.existsSync(path.join(bundle, EXEC_SIDECAR)), 'the create left the exec sidecar in the bundle');
  // First through the sidecar (the front alone), then, with it gone (a bundle made by an older
  // envhook), through Node: the same env either way.
  for (const [how, expectedCalls] of [
    ['the front alone (exec sidecar)', 0],
    ['envhook (no sidecar)', 1],
  ] as const) {
    await t.test(how, async (t) => {
      if (expectedCalls) fs.rmSync(path.join(bundle, EXEC_SIDECAR));
      const before = counting.calls().length;
      const r = containerd.ctr(['task', 'exec', '--exec-id', `e${expectedCalls}`, id, '/bin/env']);
      t.equal(r.status, 0, r.stderr);
      const env = parseEnvOutput(r.stdout);
      checkInjected(t, env);
      t.notOk(env.has('REDIS_MASTER_SERVICE_HOST'), 'service link removed, as in PID 1');
      t.notOk(env.has('REDIS_MASTER_PORT'), 'service link removed, as in PID 1');
      t.equal(env.get('KUBERNETES_SERVICE_HOST'), '10.0.0.1');
      const calls = counting.calls().slice(before);
      t.equal(calls.length, expectedCalls, `envhook ran ${expectedCalls} times for the exec`);
      if (expectedCalls) t.match(calls[0], /^shim .*\bexec --process \S+ .*\b/, "with runc's argv: exec --process");
      // An exec probe: a command that checks an injected variable.
      const probe = containerd.ctr([
        'task',
        'exec',
        '--exec-id',
        `probe${expectedCalls}`,
        id,
        '/bin/sh',
        '-c',
        'test "$FROM_FILE" = HELLO',
      ]);
      t.equal(probe.status, 0, 'an exec probe reading an injected variable passes');
    });
  }
  const log = fs.readFileSync(envhookLog, 'utf8');
  t.match(log, new RegExp(`"msg":"exec: env applied; runtime next"`));
  t.notMatch(log, new RegExp(`${CANARY}|HELLO|10\\.0\\.0`), 'names, never values');
});

t.test('ctr task exec into a container envhook did not change: no Node', { skip: missing }, async (t) => {
  const before = counting.calls().length;
  const id = ctrStart(pod.annotations('app', 'containerd'));
  const r = containerd.ctr(['task', 'exec', '--exec-id', 'e1', id, '/bin/env']);
  t.equal(r.status, 0, r.stderr);
  t.equal(parseEnvOutput(r.stdout).get('REDIS_MASTER_SERVICE_HOST'), '10.0.0.7', 'the process as containerd built it');
  t.same(counting.calls().slice(before), [], 'envhook ran neither for the create nor for the exec');
});
