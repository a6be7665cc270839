// The front with real runc: run, create + start, and every other subcommand printing exactly
// what runc prints; failures leave config.json alone and start nothing.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync, type SpawnSyncOptions } from 'node:child_process';
import { containerId, makeBundle, makeRootfs, missingForRunc, parseEnvOutput, RUNC, REPO } from '../helpers/bundle.ts';
import { envhookWrapper, FRONT } from '../helpers/front.ts';

const missing = missingForRunc();

function harness(dir: string) {
  const root = path.join(dir, 'runc-root');
  const config = path.join(dir, 'envhook.json');
  fs.writeFileSync(config, '{}');
  const env = { ...process.env, ENVHOOK_CONFIG: config, ENVHOOK_BIN: envhookWrapper(path.join(dir, 'bin')), ENVHOOK_RUNTIME: RUNC! };
  const exec = (bin: string, args: string[], opts: SpawnSyncOptions = {}) => spawnSync(bin, args, { encoding: 'utf8', env, timeout: 60_000, ...opts }) as ReturnType<typeof spawnSync> & { stdout: string; stderr: string };
  return {
    root,
    env,
    rootfs: makeRootfs(path.join(dir, 'rootfs')),
    front: (args: string[], opts?: SpawnSyncOptions) => exec(FRONT, ['--root', root, ...args], opts),
    runc: (args: string[], opts?: SpawnSyncOptions) => exec(RUNC!, ['--root', root, ...args], opts),
  };
}

t.test('run through the front: the container runs, config.json marked applied', { skip: missing }, async (t) => {
  const dir = t.testdir({});
  const h = harness(dir);
  const bundle = makeBundle(path.join(dir, 'bundle'), h.rootfs, { env: ['PATH=/bin', 'X=y'] });
  const r = h.front(['run', '-b', bundle, containerId()]);
  t.equal(r.status, 0, r.stderr);
  t.equal(parseEnvOutput(r.stdout).get('X'), 'y');
  t.equal(JSON.parse(fs.readFileSync(path.join(bundle, 'config.json'), 'utf8')).annotations['envhook.io/applied'], 'create');
  // The container's exit status is runc's, which is the container's.
  const failing = makeBundle(path.join(dir, 'exit3'), h.rootfs, { args: ['sh', '-c', 'exit 3'] });
  t.equal(h.front(['run', '--bundle', failing, containerId()]).status, 3);
});

t.test('--preserve-fds: descriptors beyond stdio reach the container through the front', { skip: missing }, async (t) => {
  const dir = t.testdir({});
  const h = harness(dir);
  const bundle = makeBundle(path.join(dir, 'bundle'), h.rootfs, { args: ['sh', '-c', 'echo via-fd3 >&3'] });
  const out = path.join(dir, 'fd3');
  const fd = fs.openSync(out, 'w');
  const r = h.front(['run', '--preserve-fds', '1', '-b', bundle, containerId()], { stdio: ['ignore', 'pipe', 'pipe', fd] });
  fs.closeSync(fd);
  t.equal(r.status, 0, r.stderr);
  t.equal(fs.readFileSync(out, 'utf8'), 'via-fd3\n');
});

t.test('from a checkout the front finds dist/envhook.cjs and Node 24 by itself', { skip: missing }, async (t) => {
  t.ok(fs.existsSync(path.join(REPO, 'dist/envhook.cjs')), 'dist/envhook.cjs is built (npm run build)');
  const dir = t.testdir({});
  const h = harness(dir);
  const bundle = makeBundle(path.join(dir, 'bundle'), h.rootfs, { env: ['PATH=/bin', 'X=y'] });
  const r = h.front(['run', '-b', bundle, containerId()], { env: { ...h.env, ENVHOOK_BIN: '', PATH: `/usr/bin:/bin:/usr/sbin:/sbin` } });
  t.equal(r.status, 0, r.stderr);
  t.equal(JSON.parse(fs.readFileSync(path.join(bundle, 'config.json'), 'utf8')).annotations['envhook.io/applied'], 'create');
});

t.test('create, then start; state, list, features, kill, delete print what runc prints', { skip: missing }, async (t) => {
  const dir = t.testdir({ out: {} });
  const h = harness(dir);
  const out = path.join(dir, 'out');
  const bundle = makeBundle(path.join(dir, 'bundle'), h.rootfs, {
    args: ['sh', '-c', 'env > /out/env; exec sleep 60'],
    env: ['PATH=/bin', 'X=y'],
    mounts: [{ destination: '/out', source: out, options: ['rbind', 'rw'] }],
  });
  const id = containerId();
  const create = h.front(['create', '--bundle', bundle, id], { stdio: 'ignore' });
  t.equal(create.status, 0, 'create');
  t.equal(JSON.parse(h.runc(['state', id]).stdout).status, 'created');
  t.equal(h.front(['start', id]).status, 0, 'start');
  for (let i = 0; i < 100 && !fs.existsSync(path.join(out, 'env')); i++) await new Promise((r) => setTimeout(r, 50));
  t.equal(parseEnvOutput(fs.readFileSync(path.join(out, 'env'), 'utf8')).get('X'), 'y');

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
  for (let i = 0; i < 100 && JSON.parse(h.runc(['state', id]).stdout).status !== 'stopped'; i++) await new Promise((r) => setTimeout(r, 50));
  const del = h.front(['delete', id]);
  t.same([del.status, del.stdout, del.stderr], [0, '', ''], 'delete');
  t.equal(h.runc(['list', '-q']).stdout, '', 'nothing left');
});

t.test('sandbox containers pass through untouched', { skip: missing }, async (t) => {
  const dir = t.testdir({});
  const h = harness(dir);
  const bundle = makeBundle(path.join(dir, 'bundle'), h.rootfs, {
    env: ['PATH=/bin', 'X=y'],
    annotations: { 'io.kubernetes.cri.container-type': 'sandbox', 'envhook.io/env': '{"*":[{"name":"A","value":"b"}]}' },
  });
  const before = fs.readFileSync(path.join(bundle, 'config.json'));
  const r = h.front(['run', '-b', bundle, containerId()]);
  t.equal(r.status, 0, r.stderr);
  t.same(fs.readFileSync(path.join(bundle, 'config.json')), before, 'config.json byte for byte');
});

t.test('failures: one line, a --log line, config.json unchanged, no container', { skip: missing }, async (t) => {
  const dir = t.testdir({});
  const h = harness(dir);
  const bundle = makeBundle(path.join(dir, 'bundle'), h.rootfs, { annotations: { 'envhook.io/env': '{"*":[{"name":"A","value":"CANARY_runc_1"}]}', 'envhook.io/volumeOwners': '[]' } });
  const before = fs.readFileSync(path.join(bundle, 'config.json'));
  const log = path.join(dir, 'log.json');
  const cases: [string, string[], NodeJS.ProcessEnv][] = [
    ['pipeline failure', ['--log', log, '--log-format', 'json', 'run', '-b', bundle, containerId()], {}],
    ['runtime resolves to the front', ['--log', log, '--log-format', 'json', 'create', '-b', bundle, containerId()], { ENVHOOK_RUNTIME: FRONT }],
    ['a front reached through a front', ['--log', log, '--log-format', 'json', 'run', '-b', bundle, containerId()], { ENVHOOK_SHIM_ACTIVE: '1' }],
  ];
  for (const [name, args, env] of cases) {
    const r = h.front(args, { env: { ...h.env, ...env } });
    t.equal(r.status, 1, name);
    t.match(r.stderr, /^envhook: [^\n]+\n$/, `${name}: one line`);
    t.notMatch(r.stderr, /CANARY/);
    const last = fs.readFileSync(log, 'utf8').trimEnd().split('\n').at(-1)!;
    t.match(JSON.parse(last), { level: 'error', msg: r.stderr.trimEnd() }, `${name}: --log line`);
    t.same(fs.readFileSync(path.join(bundle, 'config.json')), before, `${name}: config.json unchanged`);
    t.equal(h.runc(['list', '-q']).stdout, '', `${name}: no container`);
  }
});
