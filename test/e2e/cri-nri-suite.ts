// The CRI cases of envhook as a resident NRI plugin on a real containerd, driven over CRI as the
// kubelet drives it: `envhook nri --socket <containerd's NRI socket>` from source, pods with no
// runtimeClassName (containerd's default runc handler). The same containerd also has the
// envhook runtime handler installed (`envhook install`), the guard for pods that must not start
// without their env while the plugin is down (NRI fails open). One containerd for every case.
// Run on 2.1.9 (Debian sid, NRI 0.8.0: test/e2e/cri-nri.test.ts) and 1.7.24 (Debian trixie, NRI
// 0.6.1: test/e2e/cri-nri-containerd17.test.ts).
import t, { type Test } from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { prepareWithEnvhook, type CriEnvhook } from '../helpers/cri/envhook.ts';
import { missingForCri, NRI_CONNECTED, type ContainerdVersion } from '../helpers/cri/containerd.ts';
import type { Leftovers } from '../helpers/leftovers.ts';
import { runPod, type KubeletPod } from '../helpers/cri/pod.ts';
import { procEnviron } from '../helpers/proc.ts';
import { startNriProcess, type NriProcess } from '../helpers/nri/process.ts';
import { envhook, parseEnvOutput } from '../helpers/bundle.ts';
import { APPLIED_KEY } from '../../src/k8s/annotation-keys.ts';
import { appliedDigest } from '../../src/plan/mark.ts';
import { atomicVolumeDir } from '../../scripts/kubelet-pod.ts';
import {
  APP_ANNOTATIONS,
  APP_CHECKS,
  CANARY,
  DB_FILES,
  FAILING,
  onPid1AndExec,
  raw,
  SERVICE_ENV,
  documentedVisibility,
  whereVisible,
} from '../helpers/cri/cases.ts';
import { waitFor } from '../helpers/wait.ts';

// NRI cannot remove variables on this runtime (the plugin refuses a removal): the env cases
// without the service-link switch, which gets its own case.
const { 'envhook.io/serviceLinks': serviceLinks, ...ENV_ANNOTATIONS } = APP_ANNOTATIONS;
const ENV_CHECKS = Object.entries(APP_CHECKS).filter(([name]) => name !== 'serviceLinks false');
const OWNERS = { 'envhook.io/volumeOwners': [{ volume: 'tls', defaultUser: 1000 }] };
const TLS = { tls: { 'tls.key': { data: `${CANARY}-key\n`, mode: 0o400 } } };
const CONTAINER = { name: 'app', command: ['sleep', '3600'], env: { POD_ENV: 'kept', ...SERVICE_ENV } };

/** A started containerd of `version` with NRI on and envhook's handler installed; the plugin and containerd stopped at teardown. */
export interface NriNode {
  node: CriEnvhook;
  dir: string;
  /** The plugin startPlugin started, if it still runs. */
  plugin: NriProcess | undefined;
  /**
   * `envhook nri` from source on containerd's NRI socket (and `extra`), with only `capabilities`
   * if given (helpers/nri/process.ts); resolves once containerd logs it connected.
   */
  startPlugin(extra?: string[], capabilities?: readonly string[]): Promise<NriProcess>;
  /** Stops containerd (the plugin first) and reports what was left. */
  stop(): Promise<Leftovers>;
}

export async function startNriNode(t: Test, version: ContainerdVersion): Promise<NriNode> {
  const dir = t.testdir();
  const node = prepareWithEnvhook({ version, nri: true });
  t.comment(node.containerd.label);
  let stopped = false;
  const self: NriNode = {
    node,
    dir,
    plugin: undefined,
    async startPlugin(extra = [], capabilities) {
      const from = fs.readFileSync(node.containerd.paths.log, 'utf8').length;
      const args = ['--socket', node.containerd.paths.nriSocket, '--kubelet-root', node.kubeletRoot, ...extra];
      const p = startNriProcess(args, { dir, capabilities });
      self.plugin = p;
      await waitFor(
        () => NRI_CONNECTED.test(fs.readFileSync(node.containerd.paths.log, 'utf8').slice(from)),
        60_000,
        'containerd: plugin connected',
      );
      return p;
    },
    async stop() {
      await self.plugin?.stop();
      self.plugin = undefined;
      stopped = true;
      return node.containerd.stop();
    },
  };
  t.teardown(async () => {
    await self.plugin?.stop();
    if (!stopped) await node.containerd.stop();
  });
  await node.containerd.start();
  return self;
}

/** CreateContainer's gRPC error text, or a failure when it succeeds. */
async function createError(t: Test, pod: KubeletPod): Promise<string> {
  try {
    const id = await pod.create(CONTAINER);
    t.fail(`CreateContainer succeeded (${id})`);
    return '';
  } catch (err) {
    return (err as Error).message;
  }
}

async function containersOf(node: CriEnvhook, pod: KubeletPod): Promise<unknown[]> {
  const { containers = [] } = await node.containerd.cri.call('ListContainers', { filter: { podSandboxId: pod.id } });
  return containers;
}

/** The cases, as one test on one containerd of `version`. */
export function criNriSuite(version: '1.7' | '2.1'): void {
  t.test(`containerd ${version} + envhook nri: pods without runtimeClassName`, { skip: missingForCri(version) }, async (t) => {
    const h = await startNriNode(t, version);
    const { node, dir } = h;
    await h.startPlugin();
    const pods: KubeletPod[] = [];
    let n = 0;
    const pod = async (handler: string, annotations: Record<string, unknown>, extra: object = {}) => {
      const p = await runPod(node.containerd, node.kubeletRoot, {
        name: `nri${n++}-${process.pid}`,
        handler,
        annotations: raw(annotations),
        emptyDirs: { config: DB_FILES },
        ...extra,
      });
      pods.push(p);
      return p;
    };

    await t.test('fileKeyRef, envFrom, $(VAR) on PID 1 and through ExecSync; owners at CreateContainer', async (t) => {
      const p = await pod('', { ...ENV_ANNOTATIONS, ...OWNERS }, { secrets: TLS });
      const key = path.join(atomicVolumeDir(p.pod, 'secret', 'tls'), '..data/tls.key');
      t.equal(fs.lstatSync(key).uid, 0, 'the kubelet wrote the secret as root');
      const id = await p.run({ ...CONTAINER, volumeMounts: { tls: '/etc/tls' } });
      for (const [name, check] of ENV_CHECKS) await t.test(name, (t) => onPid1AndExec(t, p, id, check));
      t.same(
        await whereVisible(node.containerd, p, id),
        documentedVisibility('nri'),
        "NRI: the value is in the runtime's own spec, which crictl inspect prints (docs/pods.md)",
      );
      const view = `/proc/${await p.pid(id)}/root/etc/tls/tls.key`;
      t.equal(fs.statSync(view).uid, 1000, "the secret file is owned by defaultUser in the container's view (envhook's copy)");
      t.equal(fs.readFileSync(view, 'utf8'), `${CANARY}-key\n`);
      t.equal(fs.lstatSync(key).uid, 0, "the kubelet's own file is left root's");
      const probe = await p.execSync(id, ['sh', '-c', 'test "$DB" = db.internal']);
      t.equal(probe.exitCode, 0, 'an exec probe sees the variable');
      const wrong = await p.execSync(id, ['sh', '-c', 'test "$DB" = other']);
      t.equal(wrong.exitCode, 1, 'and fails when the value differs (the probe can fail)');
      t.notOk(
        node.runs().some((l) => l.includes(id)),
        'no process of envhook ran for the container (runc handler)',
      );
    });

    await t.test('a large adjustment (300 variables, over 4 KiB on the wire) arrives whole', async (t) => {
      const lines =
        Array.from({ length: 300 }, (_, i) => `BIG_${String(i).padStart(3, '0')}='value ${i} ${'x'.repeat(20)}'`).join('\n') + '\n';
      const p = await runPod(node.containerd, node.kubeletRoot, {
        name: `nribig-${process.pid}`,
        handler: '',
        annotations: raw({ 'envhook.io/envFrom': { app: [{ fileRef: { volumeName: 'config', path: 'big.env' } }] } }),
        emptyDirs: { config: { 'big.env': lines } },
      });
      pods.push(p);
      const id = await p.run(CONTAINER);
      await onPid1AndExec(t, p, id, (t, env) => {
        t.equal([...env.keys()].filter((k) => k.startsWith('BIG_')).length, 300, 'every variable');
        t.equal(env.get('BIG_299'), `value 299 ${'x'.repeat(20)}`);
      });
      t.match(h.plugin!.log(), /nri: adjusted/);
    });

    await t.test("an init container the annotation names with []: marked, counted 'without envhook', not adjusted", async (t) => {
      // The two containers adjusted above, once counted: the supervisor publishes counts at most once
      // a second, so a status read at once may not have the last one yet.
      const before = (await h.plugin!.waitForStatus((st) => st.counts.adjusted === 2, 30_000)).counts;
      const p = await pod('', { 'envhook.io/env': { init: [], app: [{ name: 'X', value: 'y' }] } });
      await p.run({ ...CONTAINER, name: 'init' });
      const s = await h.plugin!.waitForStatus((st) => st.counts.empty === before.empty! + 1, 30_000);
      t.equal(s.counts.adjusted, before.adjusted, 'not counted adjusted');
      const st = envhook(['status', '--run-dir', h.plugin!.runDir, '--prefix', path.join(dir, 'no-install')], {
        env: { ENVHOOK_CONFIG: path.join(dir, 'empty-config.json') },
      });
      t.match(
        st.stdout,
        new RegExp(`^  containers: ${before.adjusted} adjusted, ${before.empty! + 1} without envhook, `, 'm'),
        'status says so',
      );
    });

    await t.test("a failing start: CreateContainer fails with envhook's line, no container is left", async (t) => {
      const p = await pod('', FAILING.annotations);
      const message = await createError(t, p);
      t.comment(`CreateContainer: ${message}`);
      t.match(message, `failed to get NRI adjustment for container: rpc error: code = Unknown desc = envhook: ${FAILING.message}`);
      t.notMatch(message, CANARY);
      t.same(await containersOf(node, p), [], 'no container');
    });

    await t.test("a misspelt field or volume: CreateContainer fails with envhook lint's line", async (t) => {
      const cases: [Record<string, unknown>, string][] = [
        [
          { 'envhook.io/env': { app: [{ name: 'X', vaule: CANARY }] } },
          'envhook: annotation "envhook.io/env": /app/0: unknown field "vaule" (did you mean "value"?) (and 1 more: envhook lint lists them)',
        ],
        [
          {
            'envhook.io/env': { app: [{ name: 'X', valueFrom: { fileKeyRef: { volumeName: 'confg', path: 'db.env', key: 'DB_HOST' } } }] },
          },
          'envhook: volume "confg" not found in the pod (did you mean "config"?): the kubelet sets up only volumes that a container of the pod mounts',
        ],
      ];
      for (const [annotations, line] of cases) {
        const message = await createError(t, await pod('', annotations));
        t.comment(`CreateContainer: ${message}`);
        t.match(message, line);
        t.notMatch(message, CANARY);
      }
    });

    await t.test('serviceLinks false: refused, with what to do instead', async (t) => {
      const p = await pod('', { 'envhook.io/serviceLinks': serviceLinks });
      const message = await createError(t, p);
      t.comment(`CreateContainer: ${message}`);
      t.match(
        message,
        'envhook: annotation "envhook.io/serviceLinks": container "app" would have 7 service variables removed, but NRI on this runtime drops removals: set enableServiceLinks: false in the pod spec instead',
      );
      t.same(await containersOf(node, p), [], 'no container');
    });

    await t.test('the envhook handler as a guard, plugin running: NRI applied the env, the front started no Node', async (t) => {
      const p = await pod('envhook', ENV_ANNOTATIONS);
      const id = await p.run(CONTAINER);
      for (const [name, check] of ENV_CHECKS) await t.test(name, (t) => onPid1AndExec(t, p, id, check));
      t.same(
        await whereVisible(node.containerd, p, id),
        documentedVisibility('nri'),
        'NRI under the guard handler: the same places as without it (docs/pods.md)',
      );
      t.notOk(
        node.runs().some((l) => l.includes(id)),
        'the front saw envhook.io/applied and ran runc at once',
      );
    });

    await t.test(
      'the guard, a container of the env pod that asks for nothing (an init container): marked, the front started no Node',
      async (t) => {
        const p = await pod('envhook', ENV_ANNOTATIONS);
        const id = await p.run({ name: 'init', command: ['sleep', '3600'] });
        const stored = await p.specAnnotations(id);
        // what the front's hook checks: the mark for this container and these very annotations
        t.equal(stored[APPLIED_KEY], appliedDigest({ container: 'init', annotations: stored }), 'the runtime stored the applied mark');
        t.notOk(
          node.runs().some((l) => l.includes(id)),
          'the front saw envhook.io/applied and ran runc at once',
        );
      },
    );

    await t.test('serviceLinks false under the guard handler: the plugin leaves it to the front, which removes the links', async (t) => {
      const p = await pod('envhook', APP_ANNOTATIONS);
      const id = await p.run(CONTAINER);
      for (const [name, check] of Object.entries(APP_CHECKS)) await t.test(name, (t) => onPid1AndExec(t, p, id, check));
      t.ok(
        node.runs().some((l) => l.includes(id)),
        'the front ran envhook for it',
      );
      await h.plugin!.waitForLog(/nri: left to the envhook runtime handler \(service-link removal\)/, 10_000);
    });

    await t.test('containerd restarted: the plugin reconnects and the next pod is right', async (t) => {
      const from = fs.readFileSync(node.containerd.paths.log, 'utf8').length;
      await node.containerd.restart();
      await waitFor(() => NRI_CONNECTED.test(fs.readFileSync(node.containerd.paths.log, 'utf8').slice(from)), 60_000, 'plugin back');
      const p = await pod('', ENV_ANNOTATIONS);
      const id = await p.run(CONTAINER);
      await t.test('fileKeyRef', (t) => onPid1AndExec(t, p, id, APP_CHECKS.fileKeyRef!));
    });

    await t.test('the plugin killed: NRI fails open; the guard handler still gives the env', async (t) => {
      h.plugin!.child.kill('SIGKILL');
      t.equal(await h.plugin!.exited, 'SIGKILL');
      h.plugin = undefined;
      await waitFor(
        () =>
          /connection to plugin \\"50-envhook\\" closed|plugin \\"50-envhook\\".*(closed|stopped)/.test(
            fs.readFileSync(node.containerd.paths.log, 'utf8'),
          ),
        30_000,
        'containerd saw the plugin go',
      );

      const open = await pod('', ENV_ANNOTATIONS);
      const oid = await open.run(CONTAINER);
      const pid1 = procEnviron(await open.pid(oid));
      const exec = parseEnvOutput((await open.execSync(oid, ['env'])).stdout);
      for (const env of [pid1, exec]) {
        t.notOk(env.has('DB'), 'runc handler: the container started without its env (fail open)');
        t.equal(env.get('POD_ENV'), 'kept');
      }

      const guarded = await pod('envhook', ENV_ANNOTATIONS);
      const gid = await guarded.run(CONTAINER);
      for (const [name, check] of ENV_CHECKS) await t.test(`guard: ${name}`, (t) => onPid1AndExec(t, guarded, gid, check));
      t.same(
        await whereVisible(node.containerd, guarded, gid),
        documentedVisibility('shim'),
        "the guard's own pipeline (plugin away): the shim's places, not containerd's stored spec (docs/pods.md)",
      );
      t.ok(
        node.runs().some((l) => l.includes(gid)),
        'the front ran envhook for it (env asked for, not applied)',
      );
    });

    const logs = `${fs.readFileSync(node.containerd.paths.log, 'utf8')}\n${node.logText()}\n${fs
      .readdirSync(dir)
      .filter((f) => f.endsWith('.log'))
      .map((f) => fs.readFileSync(path.join(dir, f), 'utf8'))
      .join('\n')}`;
    t.notMatch(logs, CANARY, "no value in containerd's log, the plugin's log or the front's log");
    for (const p of pods) await p.remove();
    t.same(await h.stop(), { processes: [], mounts: [] }, 'teardown leaves no process, mount or shim');
  });
}
