// The Node side of the shim, in process: which runtime it hands back to the front, what it
// writes to config.json, and that every failure leaves config.json alone and appends the
// error to runc's --log file.
import t, { type Test } from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { runShim, type ShimEnv } from '../../src/shim/shim.ts';
import { fakeExecutable, FRONT } from '../helpers/front.ts';

interface Setup {
  dir: string;
  bundle: string;
  runtime: string;
  config: string;
  deps: ShimEnv;
}

function setup(t: Test, spec: object = { ociVersion: '1.0.2', process: { env: ['PATH=/bin'] } }, env: NodeJS.ProcessEnv = {}): Setup {
  const dir = t.testdir({ bundle: { 'config.json': JSON.stringify(spec, null, '\t') }, 'envhook.json': '{}' });
  const runtime = fakeExecutable(path.join(dir, 'bin/runc'), 'runc');
  const deps: ShimEnv = { env: { PATH: path.dirname(runtime), ENVHOOK_CONFIG: path.join(dir, 'envhook.json'), ...env }, cwd: dir };
  return { dir, bundle: path.join(dir, 'bundle'), runtime, config: path.join(dir, 'bundle/config.json'), deps };
}

t.test('create: marks the spec applied, hands back runc from PATH', async (t) => {
  const s = setup(t);
  const argv = ['--root', '/r', '--log', path.join(s.dir, 'log.json'), '--log-format', 'json', 'create', '--bundle', s.bundle, '--pid-file', '/p', 'id1'];
  t.equal(runShim(argv, s.deps), s.runtime);
  const after = fs.readFileSync(s.config, 'utf8');
  t.equal(JSON.parse(after).annotations['envhook.io/applied'], 'create');
  t.match(after, /^\{\n\t"ociVersion"/, 'layout kept');
  t.notOk(fs.existsSync(path.join(s.dir, 'log.json')), 'nothing logged to runc --log on success');
});

t.test('run: a relative bundle, or none, is read from the working directory', async (t) => {
  const s = setup(t);
  runShim(['run', '-b', 'bundle', 'id'], s.deps);
  t.equal(JSON.parse(fs.readFileSync(s.config, 'utf8')).annotations['envhook.io/applied'], 'create');
  const s2 = setup(t);
  runShim(['run', '--detach', 'id'], { ...s2.deps, cwd: s2.bundle });
  t.equal(JSON.parse(fs.readFileSync(s2.config, 'utf8')).annotations['envhook.io/applied'], 'create');
});

t.test('sandbox containers and other subcommands pass through untouched', async (t) => {
  for (const annotations of [{ 'io.kubernetes.cri.container-type': 'sandbox' }, { 'io.kubernetes.cri-o.ContainerType': 'sandbox', 'envhook.io/env': '{"app":[]}' }]) {
    const s = setup(t, { ociVersion: '1.0.2', annotations });
    const before = fs.readFileSync(s.config);
    t.equal(runShim(['create', '--bundle', s.bundle, 'pause'], s.deps), s.runtime);
    t.same(fs.readFileSync(s.config), before, 'config.json byte for byte');
  }
  const s = setup(t);
  const before = fs.readFileSync(s.config);
  for (const argv of [['state', 'x'], ['--root', '/r', 'delete', '--force', 'x'], ['create', '--help'], []]) {
    t.equal(runShim(argv, { ...s.deps, cwd: '/nonexistent' }), s.runtime, JSON.stringify(argv));
  }
  t.same(fs.readFileSync(s.config), before);
});

t.test('failures: thrown, config.json unchanged, error line appended to --log', async (t) => {
  const cases: [string, (s: Setup) => string[], RegExp][] = [
    ['env requested (until env resolution lands: refused)', (s) => {
      fs.writeFileSync(s.config, JSON.stringify({ ociVersion: '1.0.2', annotations: { 'envhook.io/env': '{"*":[]}' } }));
      return ['create', '-b', s.bundle, 'x'];
    }, /^annotation "envhook\.io\/env"/],
    ['config.json not JSON', (s) => (fs.writeFileSync(s.config, '{"ociVersion": "1.0.2", "x": SECRET}'), ['create', '-b', s.bundle, 'x']), /config\.json is not valid JSON/],
    ['no config.json', (s) => ['create', '-b', path.join(s.dir, 'nope'), 'x'], /^cannot read \S+nope\/config\.json: ENOENT$/],
    ['unknown option', (s) => ['create', '-b', s.bundle, '--frobnicate', 'x'], /^runc create: unknown option "--frobnicate"$/],
    ['runtime is a front', (s) => ((s.deps.env.ENVHOOK_RUNTIME = FRONT), ['create', '-b', s.bundle, 'x']), /^runtime \S+envhook-runtime is an envhook front, not a real runtime/],
  ];
  for (const [name, prepare, message] of cases) {
    const s = setup(t);
    const log = path.join(s.dir, 'log.json');
    fs.writeFileSync(log, '{"level":"info","msg":"earlier"}\n');
    const argv = ['--log', log, '--log-format', 'json', ...prepare(s)];
    const before = fs.existsSync(s.config) ? fs.readFileSync(s.config) : undefined;
    t.throws(() => runShim(argv, s.deps), { message }, name);
    if (before) t.same(fs.readFileSync(s.config), before, `${name}: config.json unchanged`);
    t.same(fs.readdirSync(s.bundle), ['config.json'], `${name}: no temporary file`);
    const lines = fs.readFileSync(log, 'utf8').trimEnd().split('\n');
    t.equal(lines.length, 2, `${name}: one line appended`);
    const last = JSON.parse(lines[1]!);
    t.equal(last.level, 'error');
    t.match(last.msg, /^envhook: /);
    t.notMatch(lines[1]!, /SECRET/);
  }
});

t.test('the runtime: never a front, found past fronts on PATH', async (t) => {
  const s = setup(t);
  const fronts = path.join(s.dir, 'fronts');
  fs.mkdirSync(fronts);
  fs.copyFileSync(FRONT, path.join(fronts, 'runc'), fs.constants.COPYFILE_FICLONE);
  fs.chmodSync(path.join(fronts, 'runc'), 0o755);
  t.equal(runShim(['state', 'x'], { ...s.deps, env: { ...s.deps.env, PATH: `${fronts}:${path.dirname(s.runtime)}` } }), s.runtime, 'a copy of the front (marker line) is skipped');
  const wrapper = fakeExecutable(path.join(s.dir, 'wrapper/runc'), 'wrapper');
  t.throws(() => runShim(['state', 'x'], { ...s.deps, env: { ...s.deps.env, ENVHOOK_RUNTIME: wrapper, ENVHOOK_FRONT: wrapper } }), { message: /is an envhook front/ });
  t.throws(() => runShim(['state', 'x'], { ...s.deps, env: { ...s.deps.env, PATH: fronts } }), { message: 'runtime "runc" not found on PATH (other than an envhook front)' });
  t.throws(() => runShim(['state', 'x'], { ...s.deps, env: { ...s.deps.env, ENVHOOK_RUNTIME: s.dir } }), { message: /is not an executable file$/ });
});

t.test('the structured log names what was done, never values', async (t) => {
  const s = setup(t);
  const logFile = path.join(s.dir, 'envhook.log');
  runShim(['create', '-b', s.bundle, 'id7'], { ...s.deps, env: { ...s.deps.env, ENVHOOK_LOG_FILE: logFile } });
  const entries = fs.readFileSync(logFile, 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l));
  t.match(entries.at(-1), { level: 30, msg: 'applied; runtime next', id: 'id7', bundle: s.bundle });
});
