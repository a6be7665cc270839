// `envhook shim --help` (and `envhook help shim`, and `envhook shim` alone, as runc with no
// arguments): the usage on stdout, exit 0. The shim's argv is runc's, so commander never sees it.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { builtCli, NODE } from '../helpers/bundle.ts';
import { SHIM_USAGE } from '../../src/cli/shim-usage.ts';

t.test('the usage, exit 0', async (t) => {
  t.match(SHIM_USAGE, /^Usage: envhook shim <runc arguments>\n\n/);
  for (const args of [['shim', '--help'], ['shim', '-h'], ['shim'], ['help', 'shim']]) {
    const r = spawnSync(NODE, [builtCli(), ...args], { encoding: 'utf8', timeout: 60_000 });
    t.equal(r.stdout, SHIM_USAGE, `envhook ${args.join(' ')}`);
    t.equal(r.stderr, '');
    t.equal(r.status, 0);
  }
});

t.test('envhook --help lists shim among the commands, as the README does', async (t) => {
  const r = spawnSync(NODE, [builtCli(), '--help'], { encoding: 'utf8', timeout: 60_000 });
  t.equal(r.status, 0);
  t.match(
    r.stdout,
    /\n {2}shim \[runc-arguments\.\.\.\] +the runtime front's entry point\n +\(hooks\/envhook-runtime\), with runc's arguments\n/,
  );
  const readme = fs.readFileSync(path.join(import.meta.dirname, '../../README.md'), 'utf8');
  t.match(readme, /\| `shim`, `precreate`, `hook`, `inject` \|/);
});
