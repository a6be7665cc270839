// hooks/envhook-runtime: dispatch (same table as src/oci/runc-args.ts), where it finds the runtime
// (its data file) and envhook, the recursion guard, its own error lines; under dash, busybox ash
// and bash --posix.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { BUSYBOX, whichSync } from '../helpers/bundle.ts';
import { FRONT, fakeExecutable, runFront } from '../helpers/shim/front.ts';
import { RUNC_ARGV_CASES } from '../oci/runc-args.cases.ts';
import { refused } from '../helpers/refusal.ts';

const SHELLS: [string, string[] | undefined][] = [
  ['dash', whichSync('dash') ? ['dash'] : undefined],
  ['busybox ash', BUSYBOX ? [BUSYBOX, 'sh'] : undefined],
  ['bash --posix', whichSync('bash') ? ['bash', '--posix'] : undefined],
];

function fakes(dir: string) {
  const runtime = fakeExecutable(path.join(dir, 'bin/real-runc'), 'runtime');
  const envhook = fakeExecutable(
    path.join(dir, 'bin/envhook'),
    'envhook',
    'echo "RT=$ENVHOOK_RUNTIME ACTIVE=$ENVHOOK_SHIM_ACTIVE FRONT=$ENVHOOK_FRONT"\n',
  );
  return { runtime, envhook, env: { ENVHOOK_RUNTIME: runtime, ENVHOOK_BIN: envhook } };
}

for (const [name, shell] of SHELLS) {
  t.test(
    `dispatch under ${name}: create and run to envhook, everything else to the runtime, argv unchanged`,
    { skip: shell ? false : `${name} not installed` },
    async (t) => {
      const f = fakes(t.testdir({}));
      for (const c of RUNC_ARGV_CASES) {
        const r = runFront(c.argv, f.env, { shell: shell! });
        t.equal(r.status, 0, `${JSON.stringify(c.argv)}: ${r.stderr}`);
        if (c.sub === 'create' || c.sub === 'run') {
          t.same(
            r.lines,
            [`RT=${f.runtime} ACTIVE=1 FRONT=${FRONT}`, 'envhook', 'shim', ...c.argv, 'runtime', ...c.argv],
            JSON.stringify(c.argv),
          );
        } else {
          t.same(r.lines, ['runtime', ...c.argv], JSON.stringify(c.argv));
        }
      }
    },
  );
}

t.test("envhook failing: its status is the front's, the runtime never runs", async (t) => {
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

t.test('the real runtime: ENVHOOK_RUNTIME, then envhook-runtime.conf beside the front, then runc on PATH', async (t) => {
  const dir = t.testdir({});
  const f = fakes(dir);
  const installed = path.join(dir, 'prefix/envhook-runtime');
  fs.mkdirSync(path.dirname(installed));
  fs.copyFileSync(FRONT, installed);
  fs.chmodSync(installed, 0o755);
  fakeExecutable(path.join(dir, 'later/runc'), 'later-runc');
  const PATH = `${dir}/later:${process.env.PATH}`;
  const noRuntime = { ...f.env, ENVHOOK_RUNTIME: '', PATH };
  const at = (front: string, env = noRuntime) => runFront(['state', 'x'], env, { front }).lines;
  t.same(at(installed), ['later-runc', 'state', 'x'], 'no data file: runc on PATH');
  const create = runFront(['create', 'x'], noRuntime, { front: installed }).lines;
  t.same(
    [create[0], ...create.slice(-3)],
    [`RT=${dir}/later/runc ACTIVE=1 FRONT=${installed}`, 'later-runc', 'create', 'x'],
    'envhook is told the path the front then runs',
  );
  const conf = path.join(dir, 'prefix/envhook-runtime.conf');
  fs.writeFileSync(conf, `runtime=${f.runtime}\n# written by envhook install\n`);
  t.same(at(installed), ['runtime', 'state', 'x'], 'the runtime= line of the data file');
  for (const [text, want] of [
    [`# a comment first\nruntime=${f.runtime}`, 'runtime'],
    ['runtime=\n', 'later-runc'],
    ['runtimes=/x\nRUNTIME=/x\n', 'later-runc'],
    [`runtime=${f.runtime}\nruntime=/nowhere\n`, 'runtime'],
  ] as const) {
    fs.writeFileSync(conf, text);
    t.same(at(installed)[0], want, `data file ${JSON.stringify(text)}`);
  }
  fs.writeFileSync(conf, `runtime=${f.runtime}\n`);
  const linked = path.join(dir, 'bin/runc-front');
  fs.symlinkSync(installed, linked);
  t.same(at(linked)[0], 'runtime', 'a symlinked front: the data file beside the real file');
  const viaEnv = fakeExecutable(path.join(dir, 'env-runc'), 'env-runc');
  t.same(at(installed, { ...noRuntime, ENVHOOK_RUNTIME: viaEnv }), ['env-runc', 'state', 'x'], 'environment over the data file');
  fs.writeFileSync(conf, '$(touch pwned)\nruntime=`touch pwned`\n');
  const literal = runFront(['state', 'x'], noRuntime, { front: installed, cwd: dir });
  t.equal(literal.status, 127, 'a runtime= line is a path, never evaluated');
  t.notOk(fs.existsSync(path.join(dir, 'pwned')), 'nothing in the data file ran');

  // The front first on PATH as `runc`, no real runc after it: the loop guard stops it.
  const pathBin = path.join(dir, 'path');
  fs.mkdirSync(pathBin);
  fs.symlinkSync(FRONT, path.join(pathBin, 'runc'));
  const frontFirst = { ...noRuntime, PATH: `${pathBin}:${process.env.PATH}` };
  const looped = runFront(['state', 'x'], frontFirst);
  t.equal(looped.status, 1);
  t.match(
    looped.stderr,
    /^envhook: envhook-runtime \S+ was reached through an envhook front \(ENVHOOK_SHIM_ACTIVE is set\)/,
    'a front found as the runtime refuses, once',
  );
  t.equal(looped.stdout, '');
  const missing = runFront(['create', 'x'], { ...noRuntime, ENVHOOK_RUNTIME: 'no-such-runtime' });
  refused(t, missing, /^envhook: runtime "no-such-runtime" not found on PATH\n$/, 'create: looked up before envhook runs');
  t.equal(runFront(['state', 'x'], { ...noRuntime, ENVHOOK_RUNTIME: 'no-such-runtime' }).status, 127, "state: the shell's own not found");
});

t.test("envhook: ENVHOOK_BIN, next to the front, a checkout's dist/envhook.cjs on its Node 24", async (t) => {
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
  refused(t, r, /^envhook: envhook executable not found \(set ENVHOOK_BIN, or install envhook next to \S+\)\n$/);
  fakeExecutable(path.join(install, 'dist/envhook.cjs'), 'cjs');
  fakeExecutable(path.join(install, 'node_modules/.bin/node'), 'checkout-node');
  t.same(
    first().lines,
    ['checkout-node', `${install}/hooks/../dist/envhook.cjs`, 'shim', 'run', 'x', 'runtime', 'run', 'x'],
    'a checkout: its Node 24',
  );
  fakeExecutable(path.join(dir, 'node'), 'node');
  t.same(first({ ENVHOOK_NODE: path.join(dir, 'node') }).lines[0], 'node', 'ENVHOOK_NODE');
  fakeExecutable(path.join(install, 'hooks/envhook'), 'beside');
  t.same(first().lines, ['beside', 'shim', 'run', 'x', 'runtime', 'run', 'x']);
  const symlinked = path.join(dir, 'usr-local-bin/envhook-runtime');
  fs.mkdirSync(path.dirname(symlinked));
  fs.symlinkSync(front, symlinked);
  t.same(runFront(['run', 'x'], env, { front: symlinked }).lines[0], 'beside', 'next to the real file of a symlinked front');
  const other = fakeExecutable(path.join(dir, 'other-envhook'), 'other');
  t.same(first({ ENVHOOK_BIN: other }).lines[0], 'other', 'environment first');
});

t.test('shellcheck finds nothing', { skip: whichSync('shellcheck') ? false : 'shellcheck not installed' }, async (t) => {
  const r = spawnSync('shellcheck', ['-s', 'sh', FRONT], { encoding: 'utf8' });
  t.equal(r.status, 0, r.stdout + r.stderr);
});
