// `envhook convert` end to end (the bundle): stdout, --write in place, notes on stderr, and the
// failure paths, which leave every file as it was.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';

const root = path.resolve(import.meta.dirname, '../..');
const NODE = path.join(root, 'node_modules/.bin/node');
// Process-heavy (a CLI start per case): room for a busy machine.
t.setTimeout(300_000);
const envhook = (args: string[], input?: string) =>
  spawnSync(NODE, [path.join(root, 'dist/envhook.cjs'), 'convert', ...args], { encoding: 'utf8', timeout: 120_000, input });
const story2 = fs.readFileSync(path.join(root, 'examples/pods/kep-3721-story2.yaml'), 'utf8');
const BAD = `kind: Pod\nmetadata:\n  annotations:\n    envhook.io/serviceLinks: '{"*": 0}'\nspec: {containers: [{name: main}]}\n`;

t.test('stdout, stdin and notes', async (t) => {
  const r = envhook(['--to', 'native', '-'], story2);
  t.equal(r.status, 0, r.stderr);
  t.match(r.stdout, /\n {2}enableServiceLinks: false\n/);
  t.equal(r.stderr.split('\n').filter(Boolean).length, 2);
  t.match(r.stderr, /^<stdin>:11:5: envhook.io\/env \/main: note: stays an annotation/);
});

t.test('--write rewrites changed files in place; failures leave all files as they were', async (t) => {
  const dir = t.testdir({ 'a.yaml': story2, 'same.yaml': 'kind: ConfigMap\n', 'bad.yaml': BAD });
  const f = (n: string) => path.join(dir, n);
  let r = envhook(['--to', 'native', f('a.yaml'), f('same.yaml')]);
  t.equal(r.status, 1);
  t.equal(r.stderr, 'envhook: several files: use --write to rewrite them in place\n');

  r = envhook(['--to', 'native', '--write', f('a.yaml'), f('bad.yaml')]);
  t.equal(r.status, 1);
  t.equal(r.stderr, `envhook: ${f('bad.yaml')}:4:5: envhook.io/serviceLinks /*: must be boolean (fix it first: envhook lint)\n`);
  t.equal(fs.readFileSync(f('a.yaml'), 'utf8'), story2, 'a.yaml untouched');

  const before = fs.statSync(f('same.yaml')).mtimeMs;
  r = envhook(['--to', 'native', '-w', f('a.yaml'), f('same.yaml')]);
  t.equal(r.status, 0, r.stderr);
  t.equal(r.stdout, '');
  t.match(fs.readFileSync(f('a.yaml'), 'utf8'), /enableServiceLinks: false/);
  t.equal(fs.statSync(f('same.yaml')).mtimeMs, before, 'an unchanged file is not rewritten');

  r = envhook(['--to', 'annotations', '--write', f('a.yaml')]);
  t.equal(r.status, 0, r.stderr);
  t.equal(
    fs.readFileSync(f('a.yaml'), 'utf8'),
    story2.replace(`envhook.io/serviceLinks: '{"*": false}'`, `envhook.io/serviceLinks: '{"*":false}'`),
    'and back',
  );

  r = envhook(['--to', 'sideways', f('a.yaml')]);
  t.equal(r.status, 1);
  t.match(r.stderr, /^envhook: option '--to <form>' argument 'sideways' is invalid/);
  r = envhook([f('a.yaml')]);
  t.equal(r.status, 1);
  t.match(r.stderr, /^envhook: required option '--to <form>' not specified/);
});
