// The kubelet's view of envhook on containerd with the CRI plugin (1.6: test/e2e/cri.test.ts;
// 1.7.24 from Debian trixie: test/e2e/cri-containerd17.test.ts), one containerd for every case: pods run over CRI gRPC
// (RunPodSandbox, CreateContainer, StartContainer, ContainerStatus, ExecSync, Stop*/Remove*)
// with kubelet-made pod directories, through the `envhook` runtime handler that the real
// `envhook install` registered. Each variable is checked on PID 1 (/proc/PID/environ, the
// PID from ContainerStatus) and in a process started by ExecSync (kubectl exec, exec probes),
// which containerd builds from its own stored spec, not from the bundle's config.json.
import t from 'tap';
import { ContainerState } from '../helpers/cri/client.ts';
import { missingForCri, type ContainerdVersion } from '../helpers/cri/containerd.ts';
import { prepareWithEnvhook, type CriEnvhook } from '../helpers/cri/envhook.ts';
import { runPod } from '../helpers/cri/pod.ts';
import {
  APP_ANNOTATIONS,
  APP_CHECKS,
  CANARY,
  DB_FILES,
  FAILING,
  onPid1AndExec,
  OWNERS_ANNOTATION,
  raw,
  SERVICE_ENV,
  documentedVisibility,
  whereVisible,
} from '../helpers/cri/cases.ts';

/** The cases on one containerd of `version`, started before the first. */
export function criShimSuite(version: Exclude<ContainerdVersion, '2.1'>): void {
  const missing = missingForCri(version);
  let node: CriEnvhook;

  if (!missing) {
    t.before(async () => {
      node = prepareWithEnvhook({ version });
      await node.containerd.start();
      t.comment(node.containerd.label);
    });
    // A failed test must not leave a daemon behind; the last test checks the clean teardown itself.
    t.teardown(async () => {
      if (!stopped) await node?.containerd.stop();
    });
  }
  let stopped = false;

  t.test('a pod through the envhook handler', { skip: missing }, async (t) => {
    const pod = await runPod(node.containerd, node.kubeletRoot, {
      name: `app-${process.pid}`,
      handler: 'envhook',
      annotations: raw({ ...APP_ANNOTATIONS, ...OWNERS_ANNOTATION }),
      emptyDirs: { config: DB_FILES },
      secrets: { tls: { 'tls.key': 'not a real key\n' } },
    });
    // The emptyDir `config` is not mounted: its variables can only come from envhook.
    const id = await pod.run({
      name: 'app',
      command: ['sleep', '3600'],
      env: { POD_ENV: 'kept', ...SERVICE_ENV },
      volumeMounts: { tls: '/etc/tls' },
    });

    for (const [name, check] of Object.entries(APP_CHECKS)) await t.test(name, (t) => onPid1AndExec(t, pod, id, check));
    await t.test("where the value is visible: the bundle, not containerd's stored spec (docs/pods.md)", async (t) => {
      t.same(await whereVisible(node.containerd, pod, id), documentedVisibility('shim'));
    });
    await t.test('an exec probe (ExecSync sh -c test) sees the variable', async (t) => {
      const ok = await pod.execSync(id, ['sh', '-c', 'test "$DB" = db.internal']);
      t.equal(ok.exitCode, 0, 'probe succeeds');
      const no = await pod.execSync(id, ['sh', '-c', 'test "$DB" = elsewhere']);
      t.equal(no.exitCode, 1, 'and fails when the value differs (the probe can fail)');
    });
    await t.test('ExecSync without Node: the front applies the exec sidecar itself', async (t) => {
      const before = node.runs().length;
      const r = await pod.execSync(id, ['sh', '-c', 'printf %s "$DB"']);
      t.equal(r.stdout, 'db.internal');
      t.same(node.runs().slice(before), [], 'no envhook run for the exec: containerd wrote the original env as config.json has it');
    });
    await t.test('volumeOwners: the secret file owned by the chosen UID', async (t) => {
      const r = await pod.execSync(id, ['stat', '-L', '-c', '%u', '/etc/tls/tls.key']);
      t.equal(r.stdout.trim(), '1000');
    });
    t.test("envhook's log: names only", async (t) => {
      const log = node.logText();
      t.match(log, new RegExp(`"id":"${id}"[^\\n]*"container":"app"`));
      t.notMatch(log, /db\.internal|5432|CANARY/);
    });
    await pod.remove();
  });

  t.test('the same pod through the plain runc handler gets nothing', { skip: missing }, async (t) => {
    const pod = await runPod(node.containerd, node.kubeletRoot, {
      name: `plain-${process.pid}`,
      handler: 'runc',
      annotations: raw(APP_ANNOTATIONS),
      emptyDirs: { config: DB_FILES },
    });
    const id = await pod.run({ name: 'app', command: ['sleep', '3600'], env: SERVICE_ENV });
    await onPid1AndExec(t, pod, id, (t, env) => {
      t.notOk(env.has('DB'));
      t.equal(env.get('REDIS_MASTER_SERVICE_HOST'), SERVICE_ENV.REDIS_MASTER_SERVICE_HOST);
    });
    t.notOk(
      node.runs().some((l) => l.includes(id) || l.includes(pod.id)),
      'envhook never ran for it',
    );
    await pod.remove();
  });

  t.test("a failing start shows envhook's message in ContainerStatus (kubectl describe)", { skip: missing }, async (t) => {
    const pod = await runPod(node.containerd, node.kubeletRoot, {
      name: `bad-${process.pid}`,
      handler: 'envhook',
      annotations: raw(FAILING.annotations),
      emptyDirs: { config: DB_FILES },
    });
    const id = await pod.create({ name: 'app', command: ['sleep', '3600'] });
    const err = await pod.start(id).then(
      () => undefined,
      (e: Error) => e,
    );
    t.ok(err, 'StartContainer fails');
    t.match(String(err?.message), `envhook: ${FAILING.message}`);
    const status = await pod.status(id);
    t.equal(status.state, ContainerState.EXITED);
    t.equal(status.reason, 'StartError');
    t.match(status.message, `OCI runtime create failed: envhook: ${FAILING.message}: unknown`);
    t.notMatch(`${status.message} ${err?.message} ${node.logText()}`, CANARY, 'no value anywhere');
    await pod.remove();
  });

  t.test('a sandbox and an unannotated container start without envhook running', { skip: missing }, async (t) => {
    const before = node.runs().length;
    const pod = await runPod(node.containerd, node.kubeletRoot, {
      name: `none-${process.pid}`,
      handler: 'envhook',
      emptyDirs: { config: DB_FILES },
    });
    const id = await pod.run({ name: 'app', command: ['sleep', '3600'], env: SERVICE_ENV });
    t.equal((await pod.execSync(id, ['true'])).exitCode, 0, 'running, and exec works');
    t.same(node.runs().slice(before), [], 'no envhook run for the sandbox, the container or the exec');
    t.notMatch(node.logText(), new RegExp(`${pod.id}|${id}`), 'and nothing in its log');

    // The counter does count: the annotated pod's container runs envhook, its sandbox does not.
    const annotated = await runPod(node.containerd, node.kubeletRoot, {
      name: `some-${process.pid}`,
      handler: 'envhook',
      annotations: raw(APP_ANNOTATIONS),
      emptyDirs: { config: DB_FILES },
    });
    const aid = await annotated.run({ name: 'app', command: ['sleep', '3600'] });
    const runs = node.runs().slice(before);
    t.ok(
      runs.some((l) => l.startsWith('shim ') && l.includes(aid)),
      'the annotated container ran envhook',
    );
    t.notOk(
      runs.some((l) => l.includes(annotated.id)),
      'its sandbox did not',
    );
    await pod.remove();
    await annotated.remove();
  });

  t.test('teardown leaves no process, mount or shim', { skip: missing }, async (t) => {
    // A pod still running when the kubelet goes: stop() removes it over CRI, then stops containerd.
    const pod = await runPod(node.containerd, node.kubeletRoot, {
      name: `last-${process.pid}`,
      handler: 'envhook',
      annotations: raw(APP_ANNOTATIONS),
      emptyDirs: { config: DB_FILES },
    });
    await pod.run({ name: 'app', command: ['sleep', '3600'] });
    stopped = true;
    const left = await node.containerd.stop();
    t.same(left.processes, [], 'no containerd, shim, front, envhook or container process');
    t.same(left.mounts, [], 'no rootfs, shm or bind mount under the temporary directory');
  });
}
