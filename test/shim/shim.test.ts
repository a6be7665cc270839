// The Node side of the shim, in process: which runtime it hands back to the front, what it
// writes to config.json, and that every failure leaves config.json alone and appends the
// error to runc's --log file.
import t, { type Test } from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { runShim, type ShimEnv } from '../../src/shim/shim.ts';
import { resolveRuntime } from '../../src/shim/runtime.ts';
import { EXEC_SIDECAR } from '../../src/bundle/exec-sidecar.ts';
import { fakeExecutable, FRONT } from '../helpers/shim/front.ts';
import { ref, setup as podSetup, type InjectSetup } from '../helpers/shim/inject.ts';
import { makeAtomicVolume, type Projection } from '../../scripts/kubelet-pod.ts';
import { runDirStorage } from '../../src/watch/run-dir-memory.ts';

const CANARY = 'CANARY-shim-5b2e';
const FILES = { 'config.env': `CONFIG_VAR='HELLO'\nSECRET='${CANARY}'\n` };
const ENV = {
  'envhook.io/env': {
    app: [
      { name: 'FROM_FILE', valueFrom: ref('CONFIG_VAR', 'config.env') },
      { name: 'GREETING', value: '$(FROM_FILE) world' },
    ],
  },
};

interface Setup extends InjectSetup {
  runtime: string;
  where: ShimEnv;
}

function setup(t: Test, annotations: Record<string, unknown> = ENV, env: NodeJS.ProcessEnv = {}): Setup {
  const s = podSetup(t, FILES, annotations);
  fs.writeFileSync(path.join(s.dir, 'envhook.json'), '{}');
  const runtime = fakeExecutable(path.join(s.dir, 'bin/runc'), 'runc');
  const where: ShimEnv = {
    env: { PATH: path.dirname(runtime), ENVHOOK_CONFIG: path.join(s.dir, 'envhook.json'), ENVHOOK_KUBELET_ROOT: s.pod.kubeletRoot, ...env },
    cwd: s.dir,
  };
  return { ...s, runtime, where };
}

const specOf = (s: Setup) => JSON.parse(fs.readFileSync(s.config, 'utf8'));

t.test('create: env applied and marked in config.json, runc from PATH handed back', async (t) => {
  const s = setup(t);
  const argv = [
    '--root',
    '/r',
    '--log',
    path.join(s.dir, 'log.json'),
    '--log-format',
    'json',
    'create',
    '--bundle',
    s.bundle,
    '--pid-file',
    '/p',
    'id1',
  ];
  t.doesNotThrow(() => runShim(argv, s.where));
  t.equal(resolveRuntime('runc', s.where.env), s.runtime, 'runc from PATH: what the front will exec');
  const spec = specOf(s);
  t.same(spec.process.env, ['PATH=/bin', 'HOME=/', 'FROM_FILE=HELLO', 'GREETING=HELLO world']);
  t.match(spec.annotations['envhook.io/applied'], /^sha256:[0-9a-f]{32}$/);
  t.match(fs.readFileSync(s.config, 'utf8'), /^\{\n\t"ociVersion"/, 'layout kept');
  t.notOk(fs.existsSync(path.join(s.dir, 'log.json')), 'nothing logged to runc --log on success');
  const sidecar = fs.readFileSync(path.join(s.bundle, EXEC_SIDECAR), 'utf8');
  t.equal(
    sidecar,
    'envhook exec sidecar 1\nid1\n["PATH=/bin","HOME=/"]\n["PATH=/bin","HOME=/","FROM_FILE=HELLO","GREETING=HELLO world"]\n',
    'exec sidecar: the id, the original env (compact) and the exec env',
  );
});

t.test('the exec sidecar: none where nothing changed, a stale one removed', async (t) => {
  const s = setup(t, { 'io.kubernetes.cri.container-type': 'sandbox', ...ENV });
  fs.writeFileSync(path.join(s.bundle, EXEC_SIDECAR), "envhook_exec_from='[]'\n");
  runShim(['create', '--bundle', s.bundle, 'pause'], s.where);
  t.notOk(fs.existsSync(path.join(s.bundle, EXEC_SIDECAR)), "a sandbox: an earlier create's sidecar does not outlive it");
  const plain = setup(t, {});
  runShim(['create', '--bundle', plain.bundle, 'x'], plain.where);
  t.notOk(fs.existsSync(path.join(plain.bundle, EXEC_SIDECAR)), 'no request: none');
  const odd = setup(t);
  fs.mkdirSync(path.join(odd.bundle, EXEC_SIDECAR, 'x'), { recursive: true });
  const before = fs.readFileSync(odd.config);
  t.throws(
    () => runShim(['create', '--bundle', odd.bundle, 'x'], odd.where),
    { message: `cannot remove ${path.join(odd.bundle, EXEC_SIDECAR)}: is a directory, not a file (ERR_FS_EISDIR)` },
    'a directory in its place: one line, the create fails',
  );
  t.same(fs.readFileSync(odd.config), before, 'config.json unchanged');
});

t.test('run: a relative bundle, or none, is read from the working directory', async (t) => {
  const s = setup(t);
  runShim(['run', '-b', 'bundle', 'id'], s.where);
  t.ok(specOf(s).process.env.includes('FROM_FILE=HELLO'));
  const s2 = setup(t);
  runShim(['run', '--detach', 'id'], { ...s2.where, cwd: s2.bundle });
  t.ok(specOf(s2).process.env.includes('FROM_FILE=HELLO'));
});

t.test('untouched: no request, sandbox containers, other subcommands', async (t) => {
  for (const annotations of [
    {},
    { 'io.kubernetes.cri.container-type': 'sandbox', ...ENV },
    { 'io.kubernetes.cri-o.ContainerType': 'sandbox', 'envhook.io/env': 'not json' },
  ]) {
    const s = setup(t, annotations);
    const before = fs.readFileSync(s.config);
    t.doesNotThrow(() => runShim(['create', '--bundle', s.bundle, 'pause'], s.where));
    t.same(fs.readFileSync(s.config), before, `${JSON.stringify(annotations)}: config.json byte for byte`);
  }
  const s = setup(t);
  const before = fs.readFileSync(s.config);
  for (const argv of [['state', 'x'], ['--root', '/r', 'delete', '--force', 'x'], ['create', '--help'], []]) {
    t.doesNotThrow(() => runShim(argv, { ...s.where, cwd: '/nonexistent' }), JSON.stringify(argv));
  }
  t.same(fs.readFileSync(s.config), before);
});

t.test('failures: thrown, config.json unchanged, error line appended to --log', async (t) => {
  const cases: [string, Record<string, unknown>, (s: Setup) => string[], RegExp][] = [
    [
      'key missing, not optional',
      { 'envhook.io/env': { app: [{ name: 'X', valueFrom: ref('NOPE', 'config.env') }] } },
      (s) => ['create', '-b', s.bundle, 'x'],
      /^volume "config": file "config\.env": key "NOPE" not found$/,
    ],
    [
      'annotation not JSON',
      { 'envhook.io/env': `{"app": ${CANARY}` },
      (s) => ['create', '-b', s.bundle, 'x'],
      /^annotation "envhook\.io\/env" is not valid JSON/,
    ],
    [
      'config.json not JSON',
      ENV,
      (s) => (fs.writeFileSync(s.config, `{"ociVersion": "1.0.2", "x": ${CANARY}}`), ['create', '-b', s.bundle, 'x']),
      /config\.json is not valid JSON/,
    ],
    [
      'no config.json',
      ENV,
      (s) => ['create', '-b', path.join(s.dir, 'nope'), 'x'],
      /^cannot read \S+nope\/config\.json: no such file or directory \(ENOENT\)$/,
    ],
    ['unknown option', ENV, (s) => ['create', '-b', s.bundle, '--frobnicate', 'x'], /^runc create: unknown option "--frobnicate"$/],
    [
      'runtime is a front',
      ENV,
      (s) => ((s.where.env.ENVHOOK_RUNTIME = FRONT), ['create', '-b', s.bundle, 'x']),
      /^runtime \S+envhook-runtime is an envhook front, not a real runtime/,
    ],
  ];
  for (const [name, annotations, prepare, message] of cases) {
    const s = setup(t, annotations);
    const log = path.join(s.dir, 'log.json');
    fs.writeFileSync(log, '{"level":"info","msg":"earlier"}\n');
    const argv = ['--log', log, '--log-format', 'json', ...prepare(s)];
    const before = fs.readFileSync(s.config);
    t.throws(() => runShim(argv, s.where), { message }, name);
    t.same(fs.readFileSync(s.config), before, `${name}: config.json unchanged`);
    t.same(fs.readdirSync(s.bundle), ['config.json'], `${name}: no temporary file`);
    const lines = fs.readFileSync(log, 'utf8').trimEnd().split('\n');
    t.equal(lines.length, 2, `${name}: one line appended`);
    const last = JSON.parse(lines[1]!);
    t.equal(last.level, 'error');
    t.match(last.msg, /^envhook: /);
    t.notMatch(lines[1]!, CANARY);
  }
});

t.test('the runtime: never a front, found past fronts on PATH', async (t) => {
  const s = setup(t);
  const fronts = path.join(s.dir, 'fronts');
  fs.mkdirSync(fronts);
  fs.copyFileSync(FRONT, path.join(fronts, 'runc'));
  fs.chmodSync(path.join(fronts, 'runc'), 0o755);
  const past = { ...s.where.env, PATH: `${fronts}:${path.dirname(s.runtime)}` };
  t.doesNotThrow(() => runShim(['state', 'x'], { ...s.where, env: past }));
  t.equal(resolveRuntime('runc', past), s.runtime, 'a copy of the front (marker line) is skipped');
  const wrapper = fakeExecutable(path.join(s.dir, 'wrapper/runc'), 'wrapper');
  t.throws(() => runShim(['state', 'x'], { ...s.where, env: { ...s.where.env, ENVHOOK_RUNTIME: wrapper, ENVHOOK_FRONT: wrapper } }), {
    message: /is an envhook front/,
  });
  t.throws(() => runShim(['state', 'x'], { ...s.where, env: { ...s.where.env, PATH: fronts } }), {
    message: 'runtime "runc" not found on PATH (other than an envhook front)',
  });
  t.throws(() => runShim(['state', 'x'], { ...s.where, env: { ...s.where.env, ENVHOOK_RUNTIME: s.dir } }), {
    message: /is not an executable file$/,
  });
});

t.test('the structured log names what was done, never values', async (t) => {
  const s = setup(t);
  runShim(['create', '-b', s.bundle, 'id7'], { ...s.where, env: { ...s.where.env, ENVHOOK_LOG_FILE: s.log, ENVHOOK_LOG_LEVEL: 'debug' } });
  const text = fs.readFileSync(s.log, 'utf8');
  const entries = text
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l));
  t.match(entries.at(-1), {
    level: 30,
    msg: 'applied; runtime next',
    id: 'id7',
    bundle: s.bundle,
    container: 'app',
    env: ['FROM_FILE', 'GREETING'],
  });
  t.notMatch(text, /HELLO|CANARY/);
});

t.test('a failed start is logged with the container named as on success: id, bundle, container, pod', async (t) => {
  const s = setup(t, {
    'envhook.io/env': {
      app: [
        { name: 'A', value: CANARY },
        { name: 'X', valueFrom: ref('NOPE', 'config.env') },
      ],
    },
  });
  const env = { ...s.where.env, ENVHOOK_LOG_FILE: s.log, ENVHOOK_LOG_LEVEL: 'debug' };
  t.throws(() => runShim(['create', '-b', s.bundle, 'id9'], { ...s.where, env }));
  const text = fs.readFileSync(s.log, 'utf8');
  const last = JSON.parse(text.trimEnd().split('\n').at(-1)!);
  t.match(last, {
    level: 50,
    msg: 'runtime shim failed',
    id: 'id9',
    bundle: s.bundle,
    container: 'app',
    pod: s.pod.uid,
    err: { message: /key "NOPE" not found/ },
  });
  t.notMatch(text, CANARY);
  const ok = setup(t);
  runShim(['create', '-b', ok.bundle, 'id10'], { ...ok.where, env: { ...ok.where.env, ENVHOOK_LOG_FILE: ok.log } });
  t.match(JSON.parse(fs.readFileSync(ok.log, 'utf8').trimEnd().split('\n').at(-1)!), {
    msg: 'applied; runtime next',
    id: 'id10',
    bundle: ok.bundle,
    container: 'app',
    pod: ok.pod.uid,
  });
});

t.test('already applied by an earlier stage (NRI, an earlier create): passed through untouched', async (t) => {
  const s = setup(t);
  const spec = specOf(s);
  spec.annotations['envhook.io/applied'] = 'sha256:from-nri';
  fs.writeFileSync(s.config, JSON.stringify(spec));
  const before = fs.readFileSync(s.config);
  t.doesNotThrow(() => runShim(['create', '-b', s.bundle, 'x'], { ...s.where, env: { ...s.where.env, ENVHOOK_LOG_FILE: s.log } }));
  t.same(fs.readFileSync(s.config), before, 'config.json byte for byte');
  t.match(JSON.parse(fs.readFileSync(s.log, 'utf8').trimEnd()), { msg: 'already applied; runtime next', id: 'x', container: 'app' });
});

/** A create whose pod asks owners for secret `keys`, mounted at /keys (ro), with the run directory under the test's. */
function ownersSetup(t: Test, payload: Record<string, Projection>) {
  const s = setup(t, {
    'envhook.io/volumeOwners': [{ volume: 'keys', defaultUser: 1000, items: [{ path: 'tls/server.key', user: 1001 }] }],
  });
  const vol = makeAtomicVolume(s.pod, 'secret', 'keys', payload);
  const spec = specOf(s);
  spec.mounts.push({ destination: '/keys', source: vol, type: 'bind', options: ['rbind', 'ro'], uidMappings: [] });
  fs.writeFileSync(s.config, JSON.stringify(spec));
  const runDir = path.join(s.dir, 'run');
  const where = { ...s.where, env: { ...s.where.env, ENVHOOK_RUN_DIR: runDir, ENVHOOK_LOG_FILE: s.log } };
  return { s, vol, runDir, where, copy: path.join(runDir, 'volumes', s.pod.uid, 'keys') };
}

t.test("create with volume owners: the mount's source is envhook's owned copy, the kubelet's files are left alone", async (t) => {
  const { s, vol, runDir, where, copy } = ownersSetup(t, {
    key: { data: `${CANARY}\n`, mode: 0o400 },
    'tls/server.key': { data: 'k\n', mode: 0o440 },
  });
  runShim(['create', '--bundle', s.bundle, 'id1'], where);
  const mount = specOf(s).mounts.find((m: { destination: string }) => m.destination === '/keys');
  t.same(mount, { destination: '/keys', source: copy, type: 'bind', options: ['rbind', 'ro'], uidMappings: [] }, 'only the source changed');
  t.equal(fs.statSync(path.join(copy, 'key')).uid, 1000, 'the copy: defaultUser');
  t.equal(fs.statSync(path.join(copy, 'tls/server.key')).uid, 1001, 'the item');
  t.equal(fs.statSync(path.join(copy, 'tls/server.key')).mode & 0o777, 0o440, "the kubelet's mode");
  t.equal(fs.readFileSync(path.join(copy, 'key'), 'utf8'), `${CANARY}\n`);
  t.equal(fs.lstatSync(path.join(vol, '..data/key')).uid, 0, "the kubelet's file stays root's");
  t.equal(fs.statSync(path.dirname(copy)).mode & 0o777, 0o700, 'root-only above the copy');
  const record = JSON.parse(fs.readFileSync(path.join(runDir, 'owners', `${s.pod.uid}.json`), 'utf8'));
  t.match(record.volumes, [{ volume: 'keys', dir: vol, copy: true, inPlace: false }], 'recorded for envhook watch as a copy');
  t.notMatch(fs.readFileSync(s.log, 'utf8'), CANARY, 'no content in the log');
});

t.test('create with volume owners: a payload that cannot be copied fails the create with one line, nothing written', async (t) => {
  const { s, vol, runDir, where, copy } = ownersSetup(t, { key: { data: 'v\n', mode: 0o400 }, 'tls/server.key': 'k\n', other: 'x' });
  fs.linkSync(path.join(vol, '..data/other'), path.join(s.dir, 'outside'));
  const before = fs.readFileSync(s.config);
  t.throws(() => runShim(['--log', path.join(s.dir, 'log.json'), 'create', '--bundle', s.bundle, 'id1'], where), {
    message: 'volume "keys": file "other" has 2 hard links; refusing to copy it',
  });
  t.same(fs.readFileSync(s.config), before, 'config.json unchanged');
  t.notOk(fs.existsSync(path.join(copy, '..data')), 'no copy made visible');
  t.notOk(fs.existsSync(path.join(runDir, 'owners', `${s.pod.uid}.json`)), 'nothing recorded');
  t.equal(fs.lstatSync(path.join(vol, '..data/key')).uid, 0, 'no file chowned before the failure');
});

t.test('create with volume owners: a subPath mount of the volume reads the same file of the owned copy', async (t) => {
  const { s, vol, where, copy } = ownersSetup(t, { key: { data: 'v\n', mode: 0o400 }, 'tls/server.key': { data: 'k\n', mode: 0o400 } });
  // The kubelet's bind mount for `subPath: tls/server.key` (volume-subpaths/<volume>/<container>/<index>).
  const sub = path.join(s.pod.dir, 'volume-subpaths/keys/app/2');
  fs.mkdirSync(path.dirname(sub), { recursive: true });
  fs.writeFileSync(sub, '');
  execFileSync('mount', ['--bind', fs.realpathSync(path.join(vol, 'tls/server.key')), sub]);
  try {
    const spec = specOf(s);
    spec.mounts.push({ destination: '/etc/server.key', source: sub, type: 'bind', options: ['rbind', 'ro'] });
    fs.writeFileSync(s.config, JSON.stringify(spec));
    runShim(['create', '--bundle', s.bundle, 'id1'], where);
    const source = specOf(s).mounts.find((m: { destination: string }) => m.destination === '/etc/server.key').source;
    t.equal(source, path.join(copy, '..data/tls/server.key'), "the mount's source: the entry in the copy");
    t.equal(fs.statSync(source).uid, 1001, 'owned by the item');
    t.equal(fs.statSync(sub).uid, 0, "the kubelet's file left root's");
  } finally {
    execFileSync('umount', [sub]); // before tap removes the test's directory
  }
});

t.test(
  'create with volume owners: a run directory on disk is refused under runDirOnDisk refuse, warned about under warn',
  { skip: runDirStorage(process.cwd()).inMemory ? 'the checkout is on tmpfs: no disk to refuse' : false },
  async (t) => {
    const { s, runDir, where, copy } = ownersSetup(t, { key: { data: `${CANARY}\n`, mode: 0o400 }, 'tls/server.key': 'k\n' });
    const disk = runDirStorage(runDir);
    const would = `run directory ${runDir} would be made on ${disk.type} (${disk.at}), not tmpfs: owned copies of secret volumes`;
    const before = fs.readFileSync(s.config);
    const refuse = { ...where, env: { ...where.env, ENVHOOK_RUN_DIR_ON_DISK: 'refuse' } };
    t.throws(() => runShim(['--log', path.join(s.dir, 'log.json'), 'create', '--bundle', s.bundle, 'id1'], refuse), {
      message: `${would} would be written to disk: mount a tmpfs at ${runDir}, or allow it with runDirOnDisk "warn" (ENVHOOK_RUN_DIR_ON_DISK=warn)`,
    });
    t.same(fs.readFileSync(s.config), before, 'config.json unchanged');
    t.notOk(fs.existsSync(runDir), 'nothing written to the run directory');
    t.match(fs.readFileSync(path.join(s.dir, 'log.json'), 'utf8'), 'level=error msg="envhook: run directory ', "runc's --log has the line");

    // warn (the default): one line on stderr, the copy made.
    const written: string[] = [];
    const write = process.stderr.write.bind(process.stderr);
    process.stderr.write = ((chunk: string) => (written.push(String(chunk)), true)) as typeof process.stderr.write;
    try {
      runShim(['create', '--bundle', s.bundle, 'id1'], where);
    } finally {
      process.stderr.write = write;
    }
    t.same(written, [`envhook: warning: ${would} are written to disk (runDirOnDisk is "warn"): mount a tmpfs at ${runDir}\n`]);
    t.equal(fs.readFileSync(path.join(copy, 'key'), 'utf8'), `${CANARY}\n`, 'the copy is made');
    t.match(fs.readFileSync(s.log, 'utf8'), '"level":40', 'and the warning logged');
    t.notMatch(fs.readFileSync(s.log, 'utf8'), CANARY, 'no content in the log');
  },
);
