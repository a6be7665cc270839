// The front with real runc: run, create + start with the injected variables inside the
// container, every other subcommand printing exactly what runc prints; failures leave
// config.json alone and start nothing.
import t, { type Test } from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync, type SpawnSyncOptions } from 'node:child_process';
import { containerId, makeBundle, missingForRunc, parseEnvOutput, RUNC, REPO } from '../helpers/bundle.ts';
import { envhookWrapper, FRONT } from '../helpers/shim/front.ts';
import { setup, sharedRootfs } from '../helpers/shim/inject.ts';
import { CANARY, checkInjected, ENV_ANNOTATIONS, FAILING_ANNOTATIONS, FAILING_MESSAGE, FILES } from '../helpers/shim/injected.ts';
import { sleep } from '../helpers/wait.ts';

const missing = missingForRunc();
function harness(t: Test, annotations: Record<string, unknown> = ENV_ANNOTATIONS, args = ['env']) {
  const s = setup(t, FILES, annotations);
  fs.writeFileSync(path.join(s.dir, 'envhook.json'), '{}');
  const root = path.join(s.dir, 'runc-root');
  const env = {
    ...process.env,
    ENVHOOK_CONFIG: path.join(s.dir, 'envhook.json'),
    ENVHOOK_BIN: envhookWrapper(path.join(s.dir, 'bin')),
    ENVHOOK_RUNTIME: RUNC!,
    ENVHOOK_KUBELET_ROOT: s.pod.kubeletRoot,
  };
  const exec = (bin: string, a: string[], opts: SpawnSyncOptions = {}) =>
    spawnSync(bin, a, { encoding: 'utf8', env, timeout: 60_000, ...opts }) as ReturnType<typeof spawnSync> & {
      stdout: string;
      stderr: string;
    };
  const spec = JSON.parse(fs.readFileSync(s.config, 'utf8'));
  spec.process.args = args;
  fs.writeFileSync(s.config, JSON.stringify(spec, null, '\t'));
  return {
    ...s,
    env,
    front: (a: string[], opts?: SpawnSyncOptions) => exec(FRONT, ['--root', root, ...a], opts),
    runc: (a: string[], opts?: SpawnSyncOptions) => exec(RUNC!, ['--root', root, ...a], opts),
  };
}

t.test('run through the front: the injected variables inside the container', { skip: missing }, async (t) => {
  const h = harness(t);
  const r = h.front(['run', '-b', h.bundle, containerId()]);
  t.equal(r.status, 0, r.stderr);
  checkInjected(t, parseEnvOutput(r.stdout));
  t.match(JSON.parse(fs.readFileSync(h.config, 'utf8')).annotations['envhook.io/applied'], /^sha256:/);
  // The container's exit status is runc's, which is the container's.
  const failing = makeBundle(path.join(h.dir, 'exit3'), sharedRootfs(), { args: ['sh', '-c', 'exit 3'] });
  t.equal(h.front(['run', '--bundle', failing, containerId()]).status, 3);
});

t.test('--preserve-fds: descriptors beyond stdio reach the container through the front', { skip: missing }, async (t) => {
  const h = harness(t, ENV_ANNOTATIONS, ['sh', '-c', 'echo "$GREETING" >&3']);
  const out = path.join(h.dir, 'fd3');
  const fd = fs.openSync(out, 'w');
  const r = h.front(['run', '--preserve-fds', '1', '-b', h.bundle, containerId()], { stdio: ['ignore', 'pipe', 'pipe', fd] });
  fs.closeSync(fd);
  t.equal(r.status, 0, r.stderr);
  t.equal(fs.readFileSync(out, 'utf8'), 'HELLO world\n');
});

t.test('from a checkout the front finds the build by itself (dist/envhook.cjs on its Node 24)', { skip: missing }, async (t) => {
  t.ok(fs.existsSync(path.join(REPO, 'dist/envhook.cjs')), 'envhook is built (npm run build)');
  const h = harness(t);
  const r = h.front(['run', '-b', h.bundle, containerId()], { env: { ...h.env, ENVHOOK_BIN: '', PATH: '/usr/bin:/bin:/usr/sbin:/sbin' } });
  t.equal(r.status, 0, r.stderr);
  checkInjected(t, parseEnvOutput(r.stdout));
});

t.test('create, then start; state, list, features, kill, delete print what runc prints', { skip: missing }, async (t) => {
  const h = harness(t, ENV_ANNOTATIONS, ['sh', '-c', 'env > /out/env; exec sleep 60']);
  const out = path.join(h.dir, 'out');
  fs.mkdirSync(out);
  const spec = JSON.parse(fs.readFileSync(h.config, 'utf8'));
  spec.mounts.push({ destination: '/out', source: out, type: 'bind', options: ['rbind', 'rw'] });
  fs.writeFileSync(h.config, JSON.stringify(spec, null, '\t'));
  const id = containerId();
  t.equal(h.front(['create', '--bundle', h.bundle, id], { stdio: 'ignore' }).status, 0, 'create');
  t.equal(JSON.parse(h.runc(['state', id]).stdout).status, 'created');
  t.equal(h.front(['start', id]).status, 0, 'start');
  for (let i = 0; i < 100 && !fs.existsSync(path.join(out, 'env')); i++) await sleep(50);
  await sleep(100);
  checkInjected(t, parseEnvOutput(fs.readFileSync(path.join(out, 'env'), 'utf8')));

  const same = (args: string[], what: string) => {
    const a = h.front(args);
    const b = h.runc(args);
    t.equal(a.status, b.status, `${what}: status`);
    t.equal(a.stdout, b.stdout, `${what}: stdout byte for byte`);
    // runc's error lines carry a timestamp; everything else must match.
    const untimed = (s: string) => s.replace(/time="[^"]*"/g, 'time=T');
    t.equal(untimed(a.stderr), untimed(b.stderr), `${what}: stderr`);
    return a;
  };
  t.match(same(['state', id], 'state').stdout, /"status": "running"/);
  t.match(same(['list'], 'list').stdout, new RegExp(`${id}\\s+\\d+\\s+running`));
  same(['list', '--format', 'json'], 'list --format json');
  t.match(same(['features'], 'features').stdout, /"ociVersionMin"/);
  same(['state', 'no-such-container'], 'state of a missing container');
  same(['kill', 'no-such-container', 'KILL'], 'kill of a missing container');
  same(['delete', 'no-such-container'], 'delete of a missing container');

  const kill = h.front(['kill', id, 'KILL']);
  t.same([kill.status, kill.stdout, kill.stderr], [0, '', ''], 'kill');
  for (let i = 0; i < 100 && JSON.parse(h.runc(['state', id]).stdout).status !== 'stopped'; i++) await sleep(50);
  const del = h.front(['delete', id]);
  t.same([del.status, del.stdout, del.stderr], [0, '', ''], 'delete');
  t.equal(h.runc(['list', '-q']).stdout, '', 'nothing left');
});

t.test('sandbox containers pass through untouched', { skip: missing }, async (t) => {
  const h = harness(t, { ...ENV_ANNOTATIONS, 'io.kubernetes.cri.container-type': 'sandbox' });
  const before = fs.readFileSync(h.config);
  const r = h.front(['run', '-b', h.bundle, containerId()]);
  t.equal(r.status, 0, r.stderr);
  t.notOk(parseEnvOutput(r.stdout).has('FROM_FILE'));
  t.same(fs.readFileSync(h.config), before, 'config.json byte for byte');
});

t.test('failures: one line, a --log line, config.json unchanged, no container', { skip: missing }, async (t) => {
  const h = harness(t, FAILING_ANNOTATIONS);
  const before = fs.readFileSync(h.config);
  const log = path.join(h.dir, 'log.json');
  const cases: [string, string[], NodeJS.ProcessEnv, string][] = [
    ['key missing, not optional', ['run', '-b', h.bundle, containerId()], {}, `envhook: ${FAILING_MESSAGE}`],
    [
      'runtime resolves to the front',
      ['create', '-b', h.bundle, containerId()],
      { ENVHOOK_RUNTIME: FRONT },
      `envhook: runtime ${FRONT} is an envhook front, not a real runtime: name the real one (envhook install --oci-runtime, or ENVHOOK_RUNTIME)`,
    ],
    [
      'a front reached through a front',
      ['run', '-b', h.bundle, containerId()],
      { ENVHOOK_SHIM_ACTIVE: '1' },
      `envhook: envhook-runtime ${FRONT} was reached through an envhook front (ENVHOOK_SHIM_ACTIVE is set): the real runtime must not be a front: name the real one (envhook install --oci-runtime, or ENVHOOK_RUNTIME)`,
    ],
  ];
  for (const [name, args, env, message] of cases) {
    const r = h.front(['--log', log, '--log-format', 'json', ...args], { env: { ...h.env, ...env } });
    t.equal(r.status, 1, name);
    t.equal(r.stdout, '');
    t.equal(r.stderr, `${message}\n`, `${name}: one line`);
    const last = fs.readFileSync(log, 'utf8').trimEnd().split('\n').at(-1)!;
    t.match(JSON.parse(last), { level: 'error', msg: message }, `${name}: --log line`);
    t.notMatch(r.stderr + last, CANARY);
    t.same(fs.readFileSync(h.config), before, `${name}: config.json unchanged`);
    t.equal(h.runc(['list', '-q']).stdout, '', `${name}: no container`);
  }
});
