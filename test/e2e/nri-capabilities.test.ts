// The NRI DaemonSet's least privilege, measured on a real containerd 2.1.9 (Debian sid) driven over
// CRI as the kubelet drives it: `envhook nri` started as root with exactly the capabilities
// examples/nri-daemonset.yaml adds (setpriv: bounding, permitted and effective sets only those,
// none inheritable or ambient, no_new_privs; what runc gives a container whose securityContext
// drops ALL, adds them and sets allowPrivilegeEscalation: false). Under that set: an env file an
// init container wrote as UID 1000 (0600 in a 0700 directory), env from a secret volume, an owned
// copy of a secret read by a UID-1000 container and followed across a kubelet rewrite (inotify),
// eviction over CRI of a container created while envhook was away, status and metrics. Then the
// set less each capability: the start each one is for fails with the line the admin sees
// (docs/privileges.md).
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { missingForCri } from '../helpers/cri/containerd.ts';
import { ContainerState } from '../helpers/cri/client.ts';
import { runPod, type KubeletPod } from '../helpers/cri/pod.ts';
import { procEnviron } from '../helpers/proc.ts';
import { builtCli, NODE } from '../helpers/bundle.ts';
import { untapped } from '../helpers/untapped.ts';
import { freePort, privilegesOf, underCapabilities } from '../helpers/nri/process.ts';
import { NRI_DAEMONSET, readManifest } from '../helpers/install/daemonset.ts';
import { raw } from '../helpers/cri/cases.ts';
import { waitFor } from '../helpers/wait.ts';
import { atomicVolumeDir, atomicWrite } from '../../scripts/kubelet-pod.ts';
import { EVICT_KEY } from '../../src/k8s/annotation-keys.ts';
import { startNriNode } from './cri-nri-suite.ts';

t.setTimeout(300_000);

const CANARY = 'CANARY-caps-4d2f';
const securityContext = readManifest(NRI_DAEMONSET).spec.template.spec.containers[0].securityContext;
const SET: string[] = securityContext?.capabilities?.add ?? [];
const CONTAINER = { name: 'app', command: ['sleep', '3600'], env: { POD_ENV: 'kept' } };

/** The env file an init container running as UID 1000 wrote: 0600, in a 0700 directory of its own. */
const ENV_FILE = {
  'envhook.io/env': { app: [{ name: 'DB', valueFrom: { fileKeyRef: { volumeName: 'work', path: 'init/db.env', key: 'DB_HOST' } } }] },
};
const SECRET_ENV = {
  'envhook.io/env': {
    app: [
      { name: 'PASSWORD', valueFrom: { fileRef: { volumeName: 'creds', path: 'password' } } },
      { name: 'USER', valueFrom: { fileKeyRef: { volumeName: 'creds', path: 'db.env', key: 'USER' } } },
    ],
  },
};
const OWNERS = { 'envhook.io/volumeOwners': [{ volume: 'keys', defaultUser: 1000 }] };
const key = (n: number) => ({ key: { data: `${CANARY}-key-${n}\n`, mode: 0o400 } });

t.test(
  `envhook nri with only ${SET.join(', ') || 'no capability'} (${NRI_DAEMONSET}) on containerd 2.1 over CRI`,
  { skip: missingForCri('2.1') || (spawnSync('setpriv', ['--version']).status !== 0 && 'setpriv (util-linux) not installed') },
  async (t) => {
    t.ok(SET.length > 0, `${NRI_DAEMONSET} adds capabilities`);
    t.same(securityContext.capabilities.drop, ['ALL'], 'and drops every other');
    const h = await startNriNode(t, '2.1');
    const { node, dir } = h;
    const pods: KubeletPod[] = [];
    let n = 0;
    const pod = async (annotations: Record<string, unknown>, extra: object = {}) => {
      const p = await runPod(node.containerd, node.kubeletRoot, {
        name: `caps${n++}-${process.pid}`,
        handler: '',
        annotations: raw(annotations),
        ...extra,
      });
      pods.push(p);
      return p;
    };
    /** A pod of ENV_FILE whose env file its init container wrote as UID 1000. */
    const envFilePod = async () => {
      const p = await pod(ENV_FILE, { emptyDirs: { work: {} } });
      const init = path.join(p.pod.emptyDir('work'), 'init');
      fs.mkdirSync(init, { mode: 0o700 });
      fs.writeFileSync(path.join(init, 'db.env'), `DB_HOST='db.internal'\nTOKEN='${CANARY}'\n`, { mode: 0o600 });
      for (const f of [init, path.join(init, 'db.env')]) fs.chownSync(f, 1000, 1000);
      return p;
    };
    const secretPod = () =>
      pod(SECRET_ENV, {
        secrets: {
          creds: { password: { data: `${CANARY}-pw`, mode: 0o400 }, 'db.env': { data: `USER='app'\nPW='${CANARY}'\n`, mode: 0o400 } },
        },
      });
    const ownersPod = () => pod(OWNERS, { secrets: { keys: key(0) } });
    const reader = { ...CONTAINER, volumeMounts: { keys: '/keys' }, user: 1000 };
    const createError = async (p: KubeletPod, c: object) => {
      try {
        return `created ${await p.create(c as typeof CONTAINER)}`;
      } catch (err) {
        return (err as Error).message;
      }
    };

    // A container created before envhook registered, whose pod asks to be evicted then.
    const missed = await pod({ ...ENV_FILE, [EVICT_KEY]: 'true' }, { emptyDirs: { work: {} } });
    const missedId = await missed.run(CONTAINER);
    t.notOk(procEnviron(await missed.pid(missedId)).has('DB'), 'a container created with no plugin registered: no env (fail open)');

    const port = await freePort();
    const extra = ['--cri-socket', node.containerd.paths.address, '--metrics-address', `127.0.0.1:${port}`];
    const plugin = await h.startPlugin(extra, SET);
    const st = await plugin.waitForStatus((s) => s.connected && s.workerPid !== undefined && s.counts.evicted === 1, 30_000);

    await t.test('the supervisor and the worker run with exactly the set, no_new_privs', async (t) => {
      for (const [who, pid] of [
        ['supervisor', st.pid],
        ['worker', st.workerPid!],
      ] as const) {
        const got = privilegesOf(pid);
        t.same({ effective: got.effective.sort(), noNewPrivs: got.noNewPrivs }, { effective: [...SET].sort(), noNewPrivs: 1 }, who);
      }
    });

    await t.test('eviction over CRI: the container created while envhook was away is stopped', async (t) => {
      const { status } = await node.containerd.cri.call('ContainerStatus', { containerId: missedId });
      t.same({ state: status.state, exitCode: status.exitCode }, { state: ContainerState.EXITED, exitCode: 137 });
      t.same([st.counts.missed, st.counts.evictionsFailed], [1, 0]);
    });

    await t.test('an env file an init container wrote as UID 1000 (0600 in a 0700 directory)', async (t) => {
      const p = await envFilePod();
      const id = await p.run(CONTAINER);
      t.equal(procEnviron(await p.pid(id)).get('DB'), 'db.internal');
    });

    await t.test('env from a secret volume: a whole file and a key of an env file', async (t) => {
      const p = await secretPod();
      const id = await p.run(CONTAINER);
      const env = procEnviron(await p.pid(id));
      t.equal(env.get('PASSWORD'), `${CANARY}-pw`);
      t.equal(env.get('USER'), 'app');
    });

    await t.test('an owned copy read by UID 1000, followed across a kubelet rewrite', async (t) => {
      const p = await ownersPod();
      const id = await p.run(reader);
      const cat = await p.execSync(id, ['sh', '-c', 'id -u; cat /keys/key']);
      t.same([cat.exitCode, cat.stdout], [0, `1000\n${CANARY}-key-0\n`], 'the reader, UID 1000, reads its key');
      const vol = atomicVolumeDir(p.pod, 'secret', 'keys');
      t.equal(fs.lstatSync(path.join(vol, '..data/key')).uid, 0, "the kubelet's file is left root's");
      atomicWrite(vol, key(1));
      const pid = await p.pid(id);
      const file = `/proc/${pid}/root/keys/key`;
      await waitFor(() => fs.readFileSync(file, 'utf8') === `${CANARY}-key-1\n` && fs.statSync(file).uid === 1000, 10_000, 'rewrite owned');
      t.pass("the kubelet's rewrite reached the container owned by 1000");
    });

    await t.test('status (as kubectl exec runs it in the pod: the same set) and metrics', async (t) => {
      // The worker's counts reach the supervisor's status file a moment after each CreateContainer.
      await plugin.waitForStatus((s) => s.counts.adjusted === 3, 10_000);
      const [command, args] = underCapabilities(
        SET,
        ...untapped(NODE, [builtCli(), 'status', '--json', '--root', '/', '--run-dir', plugin.runDir, '--prefix', path.join(dir, 'p')]),
      );
      const r = spawnSync(command, args, {
        encoding: 'utf8',
        env: { PATH: process.env.PATH, ENVHOOK_CONFIG: path.join(dir, 'empty-config.json') },
      });
      t.equal(r.stderr, '', 'nothing on stderr');
      const j = JSON.parse(r.stdout);
      t.match(j, { nri: 'connected', status: { counts: { evicted: 1, missed: 1, evictionsFailed: 0 } } });
      t.equal(j.status.counts.adjusted, 3, 'the three pods above');
      const ready = await fetch(`http://127.0.0.1:${port}/readyz`);
      t.equal(ready.status, 200, '/readyz');
      // The copy's update is counted by the worker and reported to the supervisor, which serves /metrics.
      let metrics = '';
      const updated = async () =>
        /^envhook_owner_copy_updates_total [1-9]/m.test((metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()));
      await waitFor(updated, 10_000, '/metrics: the copy update counted').catch(() => {});
      t.match(metrics, /^envhook_nri_connected 1$/m);
      t.match(metrics, /^envhook_nri_evictions_total 1$/m);
      t.match(metrics, /^envhook_owner_copies 1$/m);
      t.match(metrics, /^envhook_owner_copy_updates_total [1-9]/m);
    });

    // Each capability of the set, left out: the starts that need it fail, and say so.
    const WITHOUT: Record<string, { start(): Promise<string>; says: string }[]> = {
      // The chown in place (ownership/walk.ts) is left to volumes NRI cannot point at a copy (an
      // idmapped mount, which needs a runc with idmapped mounts: not here); a container that does
      // not mount the volume leaves it alone. The hint itself: test/fs/capabilities.test.ts.
      CHOWN: [
        // a container that mounts it: the owned copy's files chowned (mirror/build.ts)
        { start: async () => createError(await ownersPod(), reader), says: 'volume "keys": cannot write its owned copy (EPERM)' },
      ],
      // the owned copy's mode set after its chown (mirror/build.ts)
      FOWNER: [{ start: async () => createError(await ownersPod(), reader), says: 'volume "keys": cannot write its owned copy (EPERM)' }],
      DAC_OVERRIDE: [
        { start: async () => createError(await envFilePod(), CONTAINER), says: 'volume "work": file "init/db.env": permission denied' },
      ],
    };
    await plugin.stop();
    for (const cap of SET) {
      await t.test(`without ${cap}`, async (t) => {
        const checks = WITHOUT[cap];
        if (!checks) return t.fail(`no case for ${cap}: what needs it?`);
        const p = await h.startPlugin(
          [],
          SET.filter((c) => c !== cap),
        );
        for (const check of checks) {
          const message = await check.start();
          t.comment(`CreateContainer: ${message}`);
          const hint = `: envhook runs without CAP_${cap}: add ${cap} to its container's capabilities (docs/privileges.md)`;
          t.match(message, `desc = envhook: ${check.says}${hint}`, 'the line names the capability and what to do');
          t.notMatch(message, CANARY);
        }
        await p.stop();
      });
    }

    const logs = fs
      .readdirSync(dir)
      .filter((f) => f.endsWith('.log'))
      .map((f) => fs.readFileSync(path.join(dir, f), 'utf8'))
      .join('\n');
    t.notMatch(`${logs}\n${fs.readFileSync(node.containerd.paths.log, 'utf8')}`, CANARY, "no value in the plugin's or containerd's log");
    for (const p of pods) await p.remove();
    t.same(await h.stop(), { processes: [], mounts: [] }, 'teardown leaves no process, mount or shim');
  },
);
