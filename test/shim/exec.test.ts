// The Node side of `exec` through the front, in process, on real files: the process file gets
// PID 1's env changes and nothing else; no mark, no change; every failure leaves the process
// file intact, says one line (also in runc's --log file) and never a value.
import t, { type Test } from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { runShim, type ShimEnv } from '../../src/shim/shim.ts';
import { fakeExecutable } from '../helpers/shim/front.ts';

const CANARY = 'CANARY-exec-9a41';
const MARK = JSON.stringify({ set: ['DB', 'GREETING'], removed: ['REDIS_MASTER_SERVICE_HOST', 'REDIS_MASTER_PORT'] });
const SPEC_ENV = ['PATH=/bin', 'DB=db.internal', `GREETING=hello ${CANARY}`];
// As containerd writes it: compact, a big rlimit, everything an exec may set.
const PROCESS =
  '{"user":{"uid":1000,"gid":1000,"additionalGids":[5]},"args":["sh","-c","env"],"env":["PATH=/usr/bin","REDIS_MASTER_SERVICE_HOST=10.0.0.7","REDIS_MASTER_PORT=tcp://10.0.0.7:6379","KUBERNETES_SERVICE_HOST=10.0.0.1","OWN=mine"],' +
  '"cwd":"/work","capabilities":{"bounding":["CAP_KILL"],"effective":["CAP_KILL"]},"rlimits":[{"type":"RLIMIT_NOFILE","hard":18446744073709551615,"soft":1024}],"noNewPrivileges":true,"terminal":false}';

interface Setup {
  dir: string;
  bundle: string;
  processFile: string;
  runtime: string;
  stateLog: string;
  log: string;
  where: ShimEnv;
}

function setup(t: Test, annotations: Record<string, string> = { 'envhook.io/applied-env': MARK }, hint = true): Setup {
  const dir = t.testdir({});
  const bundle = path.join(dir, 'bundle');
  fs.mkdirSync(bundle);
  const spec = {
    ociVersion: '1.0.2',
    process: { args: ['app'], env: SPEC_ENV },
    annotations: { 'io.kubernetes.cri.container-name': 'app', 'io.kubernetes.cri.sandbox-uid': 'pod-uid-1', ...annotations },
  };
  fs.writeFileSync(path.join(bundle, 'config.json'), JSON.stringify(spec, null, '\t'));
  const processFile = path.join(dir, 'runc-process1');
  fs.writeFileSync(processFile, PROCESS, { mode: 0o600 });
  const stateLog = path.join(dir, 'state.log');
  const state = JSON.stringify(
    { ociVersion: '1.0.2', id: 'c1', pid: 1, status: 'running', bundle, annotations: { bundle: '/elsewhere' } },
    null,
    2,
  );
  const runtime = fakeExecutable(
    path.join(dir, 'bin/runc'),
    'runc',
    `printf '%s\\n' "$*" >>${JSON.stringify(stateLog)}\n[ -z "\${FAIL_STATE:-}" ] || exit 1\n[ -z "\${STATE_OUT:-}" ] || { printf '%s' "$STATE_OUT"; exit 0; }\ncat <<'EOF'\n${state}\nEOF\nexit 0\n`,
  );
  fs.writeFileSync(path.join(dir, 'envhook.json'), '{}');
  const log = path.join(dir, 'envhook.log');
  const env: NodeJS.ProcessEnv = {
    PATH: `${path.dirname(runtime)}:${process.env.PATH}`,
    ENVHOOK_CONFIG: path.join(dir, 'envhook.json'),
    ENVHOOK_LOG_FILE: log,
    ENVHOOK_LOG_LEVEL: 'debug',
  };
  if (hint) env.ENVHOOK_EXEC_BUNDLE = bundle;
  return { dir, bundle, processFile, runtime, stateLog, log, where: { env, cwd: dir } };
}

const argv = (s: Setup, ...globals: string[]) => [
  ...globals,
  'exec',
  '--process',
  s.processFile,
  '--detach',
  '--pid-file',
  path.join(s.dir, 'pid'),
  'c1',
];

t.test('a marked container: set names with config.json values, removed names gone, the rest as given', async (t) => {
  const s = setup(t);
  const inode = fs.statSync(s.processFile).ino;
  t.doesNotThrow(() => runShim(argv(s), s.where));
  const text = fs.readFileSync(s.processFile, 'utf8');
  const proc = JSON.parse(text);
  t.same(proc.env, ['PATH=/usr/bin', 'KUBERNETES_SERVICE_HOST=10.0.0.1', 'OWN=mine', 'DB=db.internal', `GREETING=hello ${CANARY}`]);
  // Every other field, byte for byte (the big rlimit too), in the same compact layout.
  const envless = (json: string) => json.replace(/"env":\[[^\]]*\],/, '');
  t.equal(envless(text), envless(PROCESS), 'args, user, cwd, capabilities, rlimits, terminal unchanged');
  t.notOk(text.endsWith('\n'), 'no final newline added');
  t.not(fs.statSync(s.processFile).ino, inode, 'replaced by rename');
  t.equal(fs.statSync(s.processFile).mode & 0o777, 0o600, 'mode kept');
  t.same(fs.readdirSync(s.dir).sort(), ['bin', 'bundle', 'envhook.json', 'envhook.log', 'runc-process1'], 'no temporary file left');
  t.notOk(fs.existsSync(s.stateLog), 'the front gave the bundle: no state call');
  const entry = JSON.parse(fs.readFileSync(s.log, 'utf8').trimEnd().split('\n').at(-1)!);
  t.match(entry, {
    level: 30,
    msg: 'exec: env applied; runtime next',
    id: 'c1',
    bundle: s.bundle,
    container: 'app',
    pod: 'pod-uid-1',
    process: s.processFile,
    set: 2,
    removed: 2,
  });
  t.notMatch(fs.readFileSync(s.log, 'utf8'), /CANARY|db\.internal|10\.0\.0/, 'names, never values');
});

t.test("the bundle from the runtime's state, with the same global options", async (t) => {
  const s = setup(t, undefined, false);
  runShim(argv(s, '--root', '/r', '--systemd-cgroup'), s.where);
  t.equal(fs.readFileSync(s.stateLog, 'utf8'), '--root /r --systemd-cgroup state c1\n');
  t.ok(
    JSON.parse(fs.readFileSync(s.processFile, 'utf8')).env.includes('DB=db.internal'),
    'the top-level bundle, not an annotation named "bundle"',
  );
});

t.test('nothing to do: the process file is not touched', async (t) => {
  for (const [what, annotations] of [
    ['no names mark', { 'envhook.io/applied': 'sha256:00' }],
    ['a mark that changes nothing here', { 'envhook.io/applied-env': '{"set":["OWN"],"removed":["NOT_THERE"]}' }],
  ] as const) {
    const s = setup(t, annotations);
    if (what === 'a mark that changes nothing here') {
      const spec = JSON.parse(fs.readFileSync(path.join(s.bundle, 'config.json'), 'utf8'));
      spec.process.env.push('OWN=mine');
      fs.writeFileSync(path.join(s.bundle, 'config.json'), JSON.stringify(spec));
    }
    const inode = fs.statSync(s.processFile).ino;
    runShim(argv(s), s.where);
    t.equal(fs.readFileSync(s.processFile, 'utf8'), PROCESS, what);
    t.equal(fs.statSync(s.processFile).ino, inode, `${what}: not rewritten`);
  }
  const s = setup(t);
  for (const a of [
    ['exec', 'c1', 'env'],
    ['exec', '--process', s.processFile],
    ['exec', '--process=', 'c1', 'env'],
  ]) {
    t.doesNotThrow(() => runShim(a, s.where), JSON.stringify(a));
  }
  t.equal(fs.readFileSync(s.processFile, 'utf8'), PROCESS, 'without --process (or an id) runc builds the process from config.json');
});

t.test('a symlinked process file: its target is replaced, the link stays', async (t) => {
  const s = setup(t);
  const link = path.join(s.dir, 'link.json');
  fs.symlinkSync(s.processFile, link);
  runShim(['exec', '-p', link, 'c1'], s.where);
  t.ok(fs.lstatSync(link).isSymbolicLink());
  t.ok(JSON.parse(fs.readFileSync(s.processFile, 'utf8')).env.includes('DB=db.internal'));
});

t.test('failures: one line, a --log line, the process file intact, no value', async (t) => {
  const cases: [string, (s: Setup) => void, RegExp, Record<string, string>?, boolean?][] = [
    [
      'a broken process file',
      (s) => fs.writeFileSync(s.processFile, `{"env":["X=${CANARY}"], ${CANARY}`),
      /^\S+runc-process1 is not valid JSON \(at offset \d+\)$/,
    ],
    [
      'a process file that is not an object',
      (s) => fs.writeFileSync(s.processFile, `["${CANARY}"]`),
      /^\S+runc-process1: not a JSON object$/,
    ],
    [
      'env not a list of strings',
      (s) => fs.writeFileSync(s.processFile, `{"env":"${CANARY}"}`),
      /^\S+runc-process1: "env" is not a list of strings$/,
    ],
    [
      'no process file',
      (s) => fs.rmSync(s.processFile),
      /^cannot read process file \S+runc-process1: no such file or directory \(ENOENT\)$/,
    ],
    [
      'a vanished bundle',
      (s) => fs.rmSync(s.bundle, { recursive: true }),
      /^cannot read \S+\/bundle\/config\.json: no such file or directory \(ENOENT\)$/,
    ],
    [
      'a broken config.json',
      (s) => fs.writeFileSync(path.join(s.bundle, 'config.json'), `{"x": ${CANARY}`),
      /^\S+config\.json is not valid JSON/,
    ],
    [
      'an invalid names mark',
      () => {},
      /^\S+config\.json: annotation "envhook\.io\/applied-env" is not \{"set":\[names\],"removed":\[names\]\}$/,
      { 'envhook.io/applied-env': `{"set":["${CANARY}=x"]}` },
    ],
    [
      'a set name config.json lacks',
      () => {},
      /^\S+config\.json: variable "NOPE" of annotation "envhook\.io\/applied-env" is not in process\.env$/,
      { 'envhook.io/applied-env': '{"set":["NOPE"],"removed":[]}' },
    ],
    [
      "the runtime's state fails",
      (s) => (s.where.env.FAIL_STATE = '1'),
      /^\S+\/runc state "c1" failed \(exit status 1\): cannot find the container's bundle$/,
      undefined,
      false,
    ],
    [
      "the runtime's state names no bundle",
      (s) => (s.where.env.STATE_OUT = `{"id":"c1","annotations":{"a":"${CANARY}"}}`),
      /^\S+\/runc state "c1": no "bundle" in its output$/,
      undefined,
      false,
    ],
    [
      "the runtime's state has a field of the wrong type",
      (s) => (s.where.env.STATE_OUT = `{"id":"c1","pid":"${CANARY}","bundle":"${s.bundle}"}`),
      /^\S+\/runc state "c1": \/pid: must be integer$/,
      undefined,
      false,
    ],
  ];
  for (const [name, prepare, message, annotations, hint] of cases) {
    const s = setup(t, annotations, hint);
    prepare(s);
    const runcLog = path.join(s.dir, 'log.json');
    fs.writeFileSync(runcLog, '{"level":"info","msg":"earlier"}\n');
    const before = fs.existsSync(s.processFile) ? fs.readFileSync(s.processFile) : undefined;
    t.throws(
      () => runShim(argv(s, '--log', runcLog, '--log-format', 'json'), s.where),
      { name: /^(EnvhookError|SchemaError)$/, message },
      name,
    );
    if (before) t.same(fs.readFileSync(s.processFile), before, `${name}: process file intact`);
    t.same(
      fs.readdirSync(s.dir).filter((f) => f.startsWith('.')),
      [],
      `${name}: no temporary file`,
    );
    const lines = fs.readFileSync(runcLog, 'utf8').trimEnd().split('\n');
    t.equal(lines.length, 2, `${name}: one --log line`);
    t.match(JSON.parse(lines[1]!), { level: 'error', msg: /^envhook: / });
    const logged = fs.readFileSync(s.log, 'utf8');
    t.match(
      JSON.parse(logged.trimEnd().split('\n').at(-1)!),
      { level: 50, msg: 'runtime shim failed (exec)', id: 'c1' },
      `${name}: envhook's log names the container`,
    );
    t.notMatch(lines[1]! + logged, CANARY, `${name}: no value`);
  }
});
