// exec through the front with real runc: `runc exec --process F` (how containerd and CRI-O run
// kubectl exec and exec probes, F built from their own stored spec) sees PID 1's variables with
// config.json's values and not the removed service-link variables, everything else of F as
// given; `runc exec ID CMD` goes straight through; unmarked containers, unannotated bundles and
// sandboxes never start Node (a counting ENVHOOK_BIN); failures say one line, F intact.
import t, { type Test } from 'tap';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync, type SpawnSyncOptions } from 'node:child_process';
import { containerId, makeBundle, missingForRunc, parseEnvOutput, RUNC } from '../helpers/bundle.ts';
import { countingEnvhook, FRONT } from '../helpers/shim/front.ts';
import { setup, sharedRootfs } from '../helpers/shim/inject.ts';
import { CANARY, checkInjected, ENV_ANNOTATIONS, FILES } from '../helpers/shim/injected.ts';

const missing = missingForRunc();
const BASE_ENV = [
  'PATH=/bin',
  'HOME=/',
  'REDIS_MASTER_SERVICE_HOST=10.0.0.7',
  'REDIS_MASTER_PORT=tcp://10.0.0.7:6379',
  'KUBERNETES_SERVICE_HOST=10.0.0.1',
];
const ANNOTATIONS = { ...ENV_ANNOTATIONS, 'envhook.io/serviceLinks': { '*': false } };

type Run = ReturnType<typeof spawnSync> & { stdout: string; stderr: string };

function harness(t: Test, annotations: Record<string, unknown> = ANNOTATIONS) {
  const s = setup(t, FILES, annotations, BASE_ENV);
  const spec = JSON.parse(fs.readFileSync(s.config, 'utf8'));
  spec.process.args = ['sleep', '300'];
  fs.writeFileSync(s.config, JSON.stringify(spec, null, '\t'));
  fs.writeFileSync(path.join(s.dir, 'envhook.json'), '{}');
  const counting = countingEnvhook(path.join(s.dir, 'envhook'));
  // Outside the test's directory, which tap removes before this test's teardown runs.
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'envhook-runc-'));
  const env = {
    ...process.env,
    ENVHOOK_CONFIG: path.join(s.dir, 'envhook.json'),
    ENVHOOK_BIN: counting.bin,
    ENVHOOK_RUNTIME: RUNC!,
    ENVHOOK_KUBELET_ROOT: s.pod.kubeletRoot,
    ENVHOOK_LOG_FILE: s.log,
    ENVHOOK_LOG_LEVEL: 'debug',
  };
  const exec = (bin: string, a: string[], opts: SpawnSyncOptions = {}) =>
    spawnSync(bin, a, {
      encoding: 'utf8',
      env,
      timeout: 60_000,
      ...opts,
    }) as Run;
  const front = (a: string[], opts?: SpawnSyncOptions) => exec(FRONT, ['--root', root, ...a], opts);
  const runc = (a: string[], opts?: SpawnSyncOptions) => exec(RUNC!, ['--root', root, ...a], opts);
  const ids: string[] = [];
  t.teardown(() => {
    for (const id of ids) runc(['delete', '--force', id]);
    fs.rmSync(root, { recursive: true, force: true });
  });
  /** create + start through the front: a running container whose config.json envhook rewrote. */
  const start = (bundle = s.bundle) => {
    const id = containerId('envhook-exec');
    ids.push(id);
    const c = front(['create', '--bundle', bundle, id], { stdio: 'ignore' });
    t.equal(c.status, 0, 'create');
    t.equal(front(['start', id]).status, 0, 'start');
    return id;
  };
  /** A process file as containerd writes one: the stored (pre-envhook) spec's process, new args. */
  const processFile = (name: string, fields: Record<string, unknown>) => {
    const file = path.join(s.dir, name);
    fs.writeFileSync(file, JSON.stringify({ ...spec.process, ...fields }), { mode: 0o600 });
    return file;
  };
  return { ...s, spec, counting, front, runc, start, processFile };
}

t.test(
  "runc exec --process F: the env as PID 1 has it; args, cwd, user and the request's own env as given",
  {
    skip: missing,
  },
  async (t) => {
    const h = harness(t);
    const id = h.start();
    const callsAfterCreate = h.counting.calls().length;
    const file = h.processFile('process.json', {
      args: ['sh', '-c', 'echo "cwd=$(pwd) uid=$(id -u)"; env'],
      cwd: '/tmp',
      user: { uid: 1000, gid: 1000 },
      env: [...BASE_ENV, 'OWN=mine'],
    });
    const r = h.front(['exec', '--process', file, id]);
    t.equal(r.status, 0, r.stderr);
    t.equal(r.stderr, '');
    t.match(r.stdout, /^cwd=\/tmp uid=1000\n/, 'cwd and user as given');
    const env = parseEnvOutput(r.stdout);
    checkInjected(t, env);
    t.notOk(env.has('REDIS_MASTER_SERVICE_HOST'), 'service link removed');
    t.notOk(env.has('REDIS_MASTER_PORT'), 'service link removed');
    t.equal(env.get('KUBERNETES_SERVICE_HOST'), '10.0.0.1', "the kubernetes service's variables kept");
    t.equal(env.get('OWN'), 'mine', "the request's own variable");
    t.equal(env.get('PATH'), '/bin');
    const rewritten = JSON.parse(fs.readFileSync(file, 'utf8'));
    t.same(rewritten.args, ['sh', '-c', 'echo "cwd=$(pwd) uid=$(id -u)"; env'], 'args in the file as given');
    t.same(rewritten.user, { uid: 1000, gid: 1000 });
    t.equal(h.counting.calls().length, callsAfterCreate + 1, 'envhook ran once for the exec');
    const log = fs.readFileSync(h.log, 'utf8');
    t.match(log, /"msg":"exec: env applied; runtime next"/);
    t.notMatch(log + r.stderr, new RegExp(`${CANARY}|HELLO|10\\.0\\.0`), 'no value in the log');

    // Without --process runc builds the process from config.json, which has the env: no Node.
    const plain = h.front(['exec', id, 'env']);
    t.equal(plain.status, 0, plain.stderr);
    const plainEnv = parseEnvOutput(plain.stdout);
    checkInjected(t, plainEnv);
    t.notOk(plainEnv.has('REDIS_MASTER_SERVICE_HOST'));
    t.equal(h.counting.calls().length, callsAfterCreate + 1, 'runc exec ID CMD: straight through');
  },
);

t.test(
  'a bundle runc prints escaped (& as \\u0026): envhook asks runc for the state itself and reads it (src/oci/state.ts)',
  { skip: missing },
  async (t) => {
    const h = harness(t);
    const bundle = path.join(h.dir, 'bundle&1');
    fs.mkdirSync(bundle);
    fs.copyFileSync(h.config, path.join(bundle, 'config.json'));
    const id = h.start(bundle);
    const state = h.runc(['state', id]);
    t.equal(state.status, 0, state.stderr);
    t.match(state.stdout, `\n  "bundle": "${path.join(h.dir, 'bundle')}\\u00261",\n`, 'runc escapes the &: the front cannot pass it on');
    const calls = h.counting.calls().length;
    const file = h.processFile('process.json', { args: ['env'], env: [...BASE_ENV, 'OWN=mine'] });
    const r = h.front(['exec', '--process', file, id]);
    t.equal(r.status, 0, r.stderr);
    t.equal(r.stderr, '');
    const env = parseEnvOutput(r.stdout);
    checkInjected(t, env);
    t.notOk(env.has('REDIS_MASTER_SERVICE_HOST'), 'service link removed');
    t.equal(env.get('OWN'), 'mine', "the request's own variable");
    t.equal(h.counting.calls().length, calls + 1, 'envhook ran once for the exec');
    const applied = fs
      .readFileSync(h.log, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l))
      .find((l) => l.msg === 'exec: env applied; runtime next');
    t.equal(applied?.bundle, bundle, "the bundle read from runc's state");
  },
);

t.test('no Node where there is nothing to do: unmarked exec, unannotated run, sandbox run', { skip: missing }, async (t) => {
  const h = harness(t, {});
  const id = h.start();
  const unannotatedRun = h.front([
    'run',
    '--bundle',
    makeBundle(path.join(h.dir, 'plain'), sharedRootfs(), { args: ['true'] }),
    containerId('envhook-exec'),
  ]);
  t.equal(unannotatedRun.status, 0, unannotatedRun.stderr);
  const sandbox = makeBundle(path.join(h.dir, 'sandbox'), sharedRootfs(), {
    args: ['true'],
    annotations: {
      ...h.pod.annotations('app'),
      'io.kubernetes.cri.container-type': 'sandbox',
      'envhook.io/env': JSON.stringify(ENV_ANNOTATIONS['envhook.io/env']),
    },
  });
  const before = fs.readFileSync(path.join(sandbox, 'config.json'));
  const sandboxRun = h.front(['run', '--bundle', sandbox, containerId('envhook-exec')]);
  t.equal(sandboxRun.status, 0, sandboxRun.stderr);
  t.same(fs.readFileSync(path.join(sandbox, 'config.json')), before, 'sandbox config.json untouched');
  const file = h.processFile('process.json', { args: ['env'] });
  const r = h.front(['exec', '--process', file, id]);
  t.equal(r.status, 0, r.stderr);
  t.equal(parseEnvOutput(r.stdout).get('REDIS_MASTER_SERVICE_HOST'), '10.0.0.7', 'an unmarked container: the process as given');
  t.same(h.counting.calls(), [], 'envhook never ran: not for the create, the runs or the exec');
  t.notOk(fs.existsSync(h.log), "and envhook's log is empty");
});

t.test('failures: a broken process file, a vanished bundle: one line, a --log line, F intact, no value', { skip: missing }, async (t) => {
  const h = harness(t);
  const id = h.start();
  const runcLog = path.join(h.dir, 'runc-log.json');
  const check = (what: string, file: string, message: RegExp) => {
    const before = fs.readFileSync(file);
    const r = h.front(['--log', runcLog, '--log-format', 'json', 'exec', '--process', file, id]);
    t.equal(r.status, 1, what);
    t.equal(r.stdout, '', `${what}: nothing ran`);
    t.match(r.stderr, message, what);
    t.equal(r.stderr.split('\n').length, 2, `${what}: one line`);
    const last = fs.readFileSync(runcLog, 'utf8').trimEnd().split('\n').at(-1)!;
    t.equal(JSON.parse(last).msg, r.stderr.trimEnd(), `${what}: the same line in runc's --log`);
    t.same(fs.readFileSync(file), before, `${what}: F intact`);
    t.notMatch(r.stderr + last + fs.readFileSync(h.log, 'utf8'), new RegExp(`${CANARY}|HELLO`), `${what}: no value`);
  };
  const broken = path.join(h.dir, 'broken.json');
  fs.writeFileSync(broken, `{"args":["env"],"env":["X=${CANARY}"],`);
  check('a broken process file', broken, /^envhook: \S+broken\.json is not valid JSON \(at offset \d+\)\n$/);
  const good = h.processFile('good.json', { args: ['env'] });
  fs.renameSync(h.bundle, `${h.bundle}.moved`);
  try {
    check('a vanished bundle', good, /^envhook: cannot read \S+\/bundle\/config\.json: no such file or directory \(ENOENT\)\n$/);
  } finally {
    fs.renameSync(`${h.bundle}.moved`, h.bundle);
  }
});
