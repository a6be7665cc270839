// Commands load lazily: the container start path (`envhook shim`) and the other node-side
// commands never load the yaml package, which only lint and convert need. Checked on the
// sources, where every package is resolved by Node (a resolve hook records them); the bundle
// keeps the same dynamic imports lazy (bench/before-after.mjs measures its start path).
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { builtCli } from '../helpers/bundle.ts';

const root = path.resolve(import.meta.dirname, '../..');
const NODE = path.join(root, 'node_modules/.bin/node');
// Process-heavy (a CLI start per case): room for a busy machine.
t.setTimeout(300_000);

function loaded(args: string[], dir: string): string[] {
  const hook = path.join(dir, 'hook.mjs');
  const r = spawnSync(NODE, ['--import', hook, path.join(root, 'src/cli/main.ts'), ...args], {
    encoding: 'utf8',
    timeout: 120_000,
    env: { ...process.env, ENVHOOK_KUBELET_ROOT: dir },
  });
  return [
    ...new Set(
      r.stderr
        .split('\n')
        .filter((l) => l.startsWith('loaded '))
        .map((l) => l.slice(7)),
    ),
  ];
}

t.test('yaml is loaded by lint and convert only', async (t) => {
  const dir = t.testdir({
    'hook.mjs': `import { registerHooks } from 'node:module';
registerHooks({ resolve(specifier, context, next) {
  const r = next(specifier, context);
  const m = /\\/node_modules\\/((?:@[^/]+\\/)?[^/]+)\\//.exec(r.url);
  if (m) process.stderr.write('loaded ' + m[1] + '\\n');
  return r;
} });
`,
    'pod.yaml': 'kind: Pod\n',
    bundle: { 'config.json': '{"ociVersion": "1.0.2", "process": {"args": ["true"]}, "root": {"path": "rootfs"}}' },
  });
  const shim = loaded(['shim', 'create', '--bundle', path.join(dir, 'bundle'), 'x'], dir);
  t.notOk(shim.includes('yaml'), `shim: ${shim.join(', ')}`);
  t.notOk(shim.includes('commander'), 'shim: no commander either');
  for (const cmd of [['version'], ['inject', '--help'], ['check', '--help']]) t.notOk(loaded(cmd, dir).includes('yaml'), cmd.join(' '));
  t.ok(loaded(['lint', path.join(dir, 'pod.yaml')], dir).includes('yaml'), 'lint loads yaml (the hook sees packages)');
  t.ok(loaded(['convert', '--to', 'native', path.join(dir, 'pod.yaml')], dir).includes('yaml'), 'convert loads yaml');
});

t.test('the built CLI bundle holds no yaml code; lint and convert run from the tools bundle and the single executable', async (t) => {
  const main = fs.readFileSync(path.join(root, 'dist/envhook-main.cjs'), 'utf8');
  t.notMatch(main, 'LineCounter', 'yaml is not in dist/envhook-main.cjs');
  t.match(fs.readFileSync(path.join(root, 'dist/envhook-tools.cjs'), 'utf8'), 'LineCounter', 'it is in dist/envhook-tools.cjs');
  const pod = path.join(root, 'examples/pods/kep-3721-story1.yaml');
  const runs: [string, string[]][] = [['bundle', [NODE, path.join(root, 'dist/envhook.cjs')]]];
  if (fs.existsSync(path.join(root, 'dist/envhook'))) runs.push(['single executable', [path.join(root, 'dist/envhook')]]);
  for (const [what, argv] of runs) {
    const lint = spawnSync(argv[0]!, [...argv.slice(1), 'lint', pod], { encoding: 'utf8', timeout: 120_000 });
    t.equal(lint.status, 0, `${what}: lint ${lint.stderr}`);
    t.equal(lint.stderr, '0 errors, 0 warnings\n');
    const convert = spawnSync(argv[0]!, [...argv.slice(1), 'convert', '--to', 'native', pod], { encoding: 'utf8', timeout: 120_000 });
    t.equal(convert.status, 0, `${what}: convert ${convert.stderr}`);
    t.match(convert.stdout, /fileKeyRef:\n/);
  }
});

t.test('an unknown command, typed or asked help for: one line, exit 1', async (t) => {
  for (const args of [['help', 'foo'], ['foo'], ['help', 'instal'], ['instal']]) {
    const r = spawnSync(NODE, [builtCli(), ...args], { encoding: 'utf8', timeout: 60_000 });
    const name = args.at(-1);
    const suggestion = name === 'instal' ? ' (Did you mean install?)' : ' (Did you mean hook?)';
    t.equal(r.stderr, `envhook: unknown command '${name}'${suggestion}\n`, `envhook ${args.join(' ')}`);
    t.equal(r.stdout, '');
    t.equal(r.status, 1);
  }
  const known = spawnSync(NODE, [builtCli(), 'help', 'check'], { encoding: 'utf8', timeout: 60_000 });
  t.equal(known.status, 0, 'help of a command still prints its help');
  t.match(known.stdout, /^Usage: envhook check \[options\] <file>\n/);
});
