// hooks/envhook-runtime: dispatch (same table as src/oci/runc-args.ts), runtime and envhook
// discovery, the recursion guard, its own error lines; under dash, busybox ash and bash --posix.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { BUSYBOX, whichSync } from '../helpers/bundle.ts';
import { FRONT, fakeExecutable, runFront } from '../helpers/front.ts';
import { RUNC_ARGV_CASES } from '../oci/runc-args.cases.ts';

const SHELLS: [string, string[] | undefined][] = [
  ['dash', whichSync('dash') ? ['dash'] : undefined],
  ['busybox ash', BUSYBOX ? [BUSYBOX, 'sh'] : undefined],
  ['bash --posix', whichSync('bash') ? ['bash', '--posix'] : undefined],
];

function fakes(dir: string) {
  const runtime = fakeExecutable(path.join(dir, 'bin/real-runc'), 'runtime');
  const envhook = fakeExecutable(path.join(dir, 'bin/envhook'), 'envhook', 'echo "RT=$ENVHOOK_RUNTIME ACTIVE=$ENVHOOK_SHIM_ACTIVE FRONT=$ENVHOOK_FRONT"\n');
  const config = path.join(dir, 'config.json');
  fs.writeFileSync(config, '{}');
  return { runtime, envhook, env: { ENVHOOK_RUNTIME: runtime, ENVHOOK_BIN: envhook, ENVHOOK_CONFIG: config } };
}

for (const [name, shell] of SHELLS) {
  t.test(`dispatch under ${name}: create and run to envhook, everything else to the runtime, argv unchanged`, { skip: shell ? false : `${name} not installed` }, async (t) => {
    const f = fakes(t.testdir({}));
    for (const c of RUNC_ARGV_CASES) {
      const r = runFront(c.argv, f.env, { shell: shell! });
      t.equal(r.status, 0, `${JSON.stringify(c.argv)}: ${r.stderr}`);
      if (c.sub === 'create' || c.sub === 'run') {
        t.same(r.lines, [`RT=${f.runtime} ACTIVE=1 FRONT=${FRONT}`, 'envhook', 'shim', ...c.argv, 'runtime', ...c.argv], JSON.stringify(c.argv));
      } else {
        t.same(r.lines, ['runtime', ...c.argv], JSON.stringify(c.argv));
      }
    }
  });
}

t.test('envhook failing: its status is the front\'s, the runtime never runs', async (t) => {
  const dir = t.testdir({});
  const f = fakes(dir);
  const failing = fakeExecutable(path.join(dir, 'failing-envhook'), 'failing', 'echo "envhook: no" >&2; exit 1\n');
  const r = runFront(['--root', '/r', 'create', '-b', '/b', 'x'], { ...f.env, ENVHOOK_BIN: failing });
  t.equal(r.status, 1);
  t.equal(r.stdout, '');
  t.equal(r.stderr, 'envhook: no\n');
  const killed = fakeExecutable(path.join(dir, 'killed-envhook'), 'killed', 'kill -TERM $$\n');
  t.equal(runFront(['run', 'x'], { ...f.env, ENVHOOK_BIN: killed }).status, 143);
});

t.test('the recursion guard: a front reached through a front refuses, with a --log line', async (t) => {
  const dir = t.testdir({});
  const f = fakes(dir);
  const log = path.join(dir, 'log.json');
  const r = runFront(['--log', log, '--log-format', 'json', 'state', 'x'], { ...f.env, ENVHOOK_SHIM_ACTIVE: '1' });
  t.equal(r.status, 1);
  t.equal(r.stdout, '', 'neither the runtime nor envhook ran');
  t.match(r.stderr, /^envhook: envhook-runtime \S+ was reached through an envhook front \(ENVHOOK_SHIM_ACTIVE is set\)/);
  t.equal(r.stderr.split('\n').length, 2, 'one line');
  const line = JSON.parse(fs.readFileSync(log, 'utf8'));
  t.equal(line.level, 'error');
  t.equal(line.msg, r.stderr.trimEnd());
  t.match(line.time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  const text = path.join(dir, 'log.txt');
  runFront(['--log=' + text, 'create', 'x'], { ...f.env, ENVHOOK_SHIM_ACTIVE: '1' });
  t.match(fs.readFileSync(text, 'utf8'), /^time="[^"]+" level=error msg="envhook: envhook-runtime .* \(ENVHOOK_SHIM_ACTIVE is set\)/);
});

t.test('the real runtime: env, then config file, then runc on PATH, never the front itself', async (t) => {
  const dir = t.testdir({});
  const f = fakes(dir);
  const pathBin = path.join(dir, 'path');
  fs.mkdirSync(pathBin);
  // The front installed as `runc` first on PATH, the real runc after it.
  fs.symlinkSync(FRONT, path.join(pathBin, 'runc'));
  fakeExecutable(path.join(dir, 'later/runc'), 'later-runc');
  const PATH = `${pathBin}:${dir}/later:${process.env.PATH}`;
  const noRuntime = { ...f.env, ENVHOOK_RUNTIME: '', PATH };
  t.same(runFront(['state', 'x'], noRuntime).lines, ['later-runc', 'state', 'x'], 'PATH, skipping the front');
  const create = runFront(['create', 'x'], noRuntime).lines;
  t.same([create[0], ...create.slice(-3)], [`RT=${dir}/later/runc ACTIVE=1 FRONT=${FRONT}`, 'later-runc', 'create', 'x'], 'envhook is told the runtime the front then runs');
  fs.writeFileSync(f.env.ENVHOOK_CONFIG, JSON.stringify({ runtime: f.runtime, logLevel: 'debug' }, null, 2));
  t.same(runFront(['state', 'x'], noRuntime).lines, ['runtime', 'state', 'x'], 'config file');
  // The file as the front reads it (plain sh, no fork): the first "runtime": "..." pair.
  for (const [text, want] of [
    [`{"kubeletRoot":"/k","runtime" :  "${f.runtime}"}`, 'runtime'],
    [`{"logFile": "runtime", "runtime": "${f.runtime}"}`, 'runtime'],
    [`{\n  "runtime": 5,\n  "x": "y"\n}`, 'later-runc'],
    [`{"kubeletRoot": "/k"}`, 'later-runc'],
    [`{"runtime": "${f.runtime}"}`, 'runtime'],
  ] as const) {
    fs.writeFileSync(f.env.ENVHOOK_CONFIG, text);
    t.same(runFront(['state', 'x'], noRuntime).lines[0], want, `config file ${JSON.stringify(text)}`);
  }
  fs.writeFileSync(f.env.ENVHOOK_CONFIG, JSON.stringify({ runtime: f.runtime, logLevel: 'debug' }, null, 2));
  const viaEnv = fakeExecutable(path.join(dir, 'env-runc'), 'env-runc');
  t.same(runFront(['state', 'x'], { ...noRuntime, ENVHOOK_RUNTIME: viaEnv }).lines, ['env-runc', 'state', 'x'], 'environment over config file');

  for (const [rt, msg] of [
    [FRONT, /^envhook: runtime \S+ is this envhook-runtime front; set ENVHOOK_RUNTIME/],
    [path.join(pathBin, 'runc'), /^envhook: runtime \S+ is this envhook-runtime front/],
    [dir, /^envhook: runtime \S+ is not an executable file/],
    ['no-such-runtime', /^envhook: runtime "no-such-runtime" not found on PATH/],
  ] as const) {
    const r = runFront(['state', 'x'], { ...noRuntime, ENVHOOK_RUNTIME: rt });
    t.equal(r.status, 1, rt);
    t.match(r.stderr, msg);
    t.equal(r.stdout, '');
  }
  // A PATH with the front as `runc` and the tools the front uses, but no real runc.
  const tools = path.join(dir, 'tools');
  fs.mkdirSync(tools);
  for (const tool of ['sed', 'readlink', 'date']) fs.symlinkSync(whichSync(tool)!, path.join(tools, tool));
  fs.writeFileSync(f.env.ENVHOOK_CONFIG, '{}');
  const onlyFront = runFront(['state', 'x'], { ...noRuntime, PATH: `${pathBin}:${tools}` }, { shell: [whichSync('dash') ?? '/bin/sh'] });
  t.match(onlyFront.stderr, /^envhook: runtime "runc" not found on PATH \(other than this envhook-runtime front\)/);
  const badConfig = runFront(['state', 'x'], { ...noRuntime, ENVHOOK_CONFIG: path.join(dir, 'missing.json') });
  t.match(badConfig.stderr, /^envhook: cannot read config file \S+missing\.json/);
});

t.test('envhook: ENVHOOK_BIN, config file, next to the front, ../dist/envhook, ../dist/envhook.cjs', async (t) => {
  const dir = t.testdir({});
  const f = fakes(dir);
  const install = path.join(dir, 'install');
  const front = path.join(install, 'hooks/envhook-runtime');
  fs.mkdirSync(path.dirname(front), { recursive: true });
  fs.copyFileSync(FRONT, front);
  fs.chmodSync(front, 0o755);
  const env = { ...f.env, ENVHOOK_BIN: '' };
  const first = (o = {}) => runFront(['run', 'x'], { ...env, ...o }, { front });

  let r = first();
  t.equal(r.status, 1);
  t.match(r.stderr, /^envhook: envhook executable not found \(set ENVHOOK_BIN or "envhookBin" in \S+, or install envhook next to \S+\)\n$/);
  fakeExecutable(path.join(install, 'dist/envhook.cjs'), 'cjs');
  fakeExecutable(path.join(dir, 'node'), 'node');
  t.same(first({ ENVHOOK_NODE: path.join(dir, 'node') }).lines, ['node', `${install}/hooks/../dist/envhook.cjs`, 'shim', 'run', 'x', 'runtime', 'run', 'x']);
  fakeExecutable(path.join(install, 'node_modules/.bin/node'), 'checkout-node');
  t.same(first().lines[0], 'checkout-node', "a checkout's Node 24 by default");
  fakeExecutable(path.join(install, 'dist/envhook'), 'sea');
  t.same(first().lines, ['sea', 'shim', 'run', 'x', 'runtime', 'run', 'x']);
  fakeExecutable(path.join(install, 'hooks/envhook'), 'beside');
  t.same(first().lines, ['beside', 'shim', 'run', 'x', 'runtime', 'run', 'x']);
  const symlinked = path.join(dir, 'usr-local-bin/envhook-runtime');
  fs.mkdirSync(path.dirname(symlinked));
  fs.symlinkSync(front, symlinked);
  t.same(runFront(['run', 'x'], env, { front: symlinked }).lines[0], 'beside', 'next to the real file of a symlinked front');
  fs.writeFileSync(f.env.ENVHOOK_CONFIG, `{"envhookBin": "${f.envhook}"}`);
  t.same(first().lines[1], 'envhook', 'config file');
  const other = fakeExecutable(path.join(dir, 'other-envhook'), 'other');
  t.same(first({ ENVHOOK_BIN: other }).lines[0], 'other', 'environment first');
});

t.test('shellcheck finds nothing', { skip: whichSync('shellcheck') ? false : 'shellcheck not installed' }, async (t) => {
  const r = spawnSync('shellcheck', ['-s', 'sh', FRONT], { encoding: 'utf8' });
  t.equal(r.status, 0, r.stdout + r.stderr);
});
