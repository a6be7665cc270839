// Env from secret, configMap, projected and CSI volumes (docs/design.md#env-from-other-volumes) through the front
// with real runc, as a runtime shim runs it: `run` and `create` + `start` give PID 1 the
// variables, `exec --process F` (how containerd and CRI-O start kubectl exec and exec probes) gives
// them to the exec process too; a missing file, a symlink out of the volume, a FIFO and a
// too-large file each fail with one line, config.json unchanged, no canary anywhere. The cases
// are test/helpers/shim/volume-env-cases.ts.
import t, { type Test } from 'tap';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync, type SpawnSyncOptions } from 'node:child_process';
import { containerId, makeBundle, missingForRunc, parseEnvOutput, RUNC } from '../helpers/bundle.ts';
import { envhookWrapper, FRONT } from '../helpers/shim/front.ts';
import { sharedRootfs } from '../helpers/shim/inject.ts';
import { ANNOTATIONS, CANARY, check, FAILURES, HOSTILE, makeHostile, VOLUMES } from '../helpers/shim/volume-env-cases.ts';
import { procEnviron, waitExeced } from '../helpers/proc.ts';
import { makePod, rawAnnotations, type PodLayout } from '../../scripts/kubelet-pod.ts';

const missing = missingForRunc();
type Run = ReturnType<typeof spawnSync> & { stdout: string; stderr: string };

const LAYOUT: PodLayout = {
  atomic: [
    ...Object.entries({ ...VOLUMES.secrets, ...HOSTILE }).map(([name, payload]) => ({ plugin: 'secret' as const, name, payload })),
    ...Object.entries(VOLUMES.configMaps).map(([name, payload]) => ({ plugin: 'configmap' as const, name, payload })),
    ...Object.entries(VOLUMES.projected).map(([name, payload]) => ({ plugin: 'projected' as const, name, payload })),
  ],
  csi: Object.entries(VOLUMES.csi).map(([name, files]) => ({ name, layout: 'atomic' as const, files })),
};

function harness(t: Test, annotations: Record<string, unknown>, args: string[]) {
  const dir = t.testdir({ outside: { secret: `${CANARY}-outside\n` } });
  const pod = makePod(path.join(dir, 'kubelet'), LAYOUT);
  makeHostile(pod, path.join(dir, 'outside/secret'));
  const bundle = makeBundle(path.join(dir, 'bundle'), sharedRootfs(), {
    args,
    env: ['PATH=/bin', 'HOME=/', 'POD_ENV=kept'],
    mounts: pod.mounts('app'),
    annotations: { ...pod.annotations('app'), ...rawAnnotations(annotations) },
  });
  const config = path.join(bundle, 'config.json');
  const log = path.join(dir, 'envhook.log');
  fs.writeFileSync(path.join(dir, 'envhook.json'), '{}');
  // Outside the test's directory, which tap removes before this test's teardown runs.
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'envhook-runc-'));
  const env = {
    ...process.env,
    ENVHOOK_CONFIG: path.join(dir, 'envhook.json'),
    ENVHOOK_BIN: envhookWrapper(path.join(dir, 'bin')),
    ENVHOOK_RUNTIME: RUNC!,
    ENVHOOK_KUBELET_ROOT: pod.kubeletRoot,
    ENVHOOK_LOG_FILE: log,
    ENVHOOK_LOG_LEVEL: 'debug',
  };
  const exec = (bin: string, a: string[], opts: SpawnSyncOptions = {}) =>
    spawnSync(bin, a, {
      encoding: 'utf8',
      env,
      timeout: 60_000,
      ...opts,
    }) as Run;
  const ids: string[] = [];
  t.teardown(() => {
    for (const id of ids) exec(RUNC!, ['--root', root, 'delete', '--force', id]);
    fs.rmSync(root, { recursive: true, force: true });
  });
  const front = (a: string[], opts?: SpawnSyncOptions) => exec(FRONT, ['--root', root, ...a], opts);
  const id = () => {
    const i = containerId('envhook-volenv');
    ids.push(i);
    return i;
  };
  return { dir, bundle, config, log, front, id, readLog: () => (fs.existsSync(log) ? fs.readFileSync(log, 'utf8') : '') };
}

t.test('run through the front: every source from every volume in the container', { skip: missing }, async (t) => {
  const h = harness(t, ANNOTATIONS, ['env']);
  const r = h.front(['run', '-b', h.bundle, h.id()]);
  t.equal(r.status, 0, r.stderr);
  check(t, parseEnvOutput(r.stdout));
  t.notMatch(h.readLog() + r.stderr, CANARY, 'no value in the log');
});

t.test('create + start, then exec --process F: PID 1 and the exec process see them', { skip: missing }, async (t) => {
  const h = harness(t, ANNOTATIONS, ['sleep', '300']);
  const stored = JSON.parse(fs.readFileSync(h.config, 'utf8')).process;
  const id = h.id();
  t.equal(h.front(['create', '--bundle', h.bundle, id], { stdio: 'ignore' }).status, 0, 'create');
  t.equal(h.front(['start', id]).status, 0, 'start');
  const pid = JSON.parse(h.front(['state', id]).stdout).pid as number;
  await waitExeced(pid);
  const environ = procEnviron(pid);
  await t.test('PID 1', async (t) => check(t, environ));
  // A process file as containerd writes one: the stored (pre-envhook) spec's process, new args.
  const file = path.join(h.dir, 'process.json');
  fs.writeFileSync(file, JSON.stringify({ ...stored, args: ['env'] }), { mode: 0o600 });
  const r = h.front(['exec', '--process', file, id]);
  t.equal(r.status, 0, r.stderr);
  await t.test('exec --process', async (t) => check(t, parseEnvOutput(r.stdout)));
  t.notMatch(h.readLog() + r.stderr, CANARY, 'no value in the log');
});

for (const [name, annotations, message] of FAILURES) {
  t.test(`${name}: one line, config.json unchanged, no container`, { skip: missing }, async (t) => {
    const h = harness(t, annotations, ['env']);
    const before = fs.readFileSync(h.config);
    const r = h.front(['run', '-b', h.bundle, h.id()]);
    t.equal(r.status, 1);
    t.equal(r.stdout, '');
    t.equal(r.stderr, `envhook: ${message}\n`);
    t.same(fs.readFileSync(h.config), before, 'config.json unchanged');
    t.notMatch(h.readLog() + r.stderr, CANARY, 'no value in the log or on stderr');
  });
}
