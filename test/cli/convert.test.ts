// `envhook convert` end to end (the bundle): stdout, --write in place, notes on stderr, and the
// failure paths, which leave every file as it was.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { refused } from '../helpers/refusal.ts';

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
  let r = envhook(['--to', 'native', '--write', f('a.yaml'), f('bad.yaml')]);
  refused(t, r, `envhook: ${f('bad.yaml')}:4:5: envhook.io/serviceLinks /*: must be boolean (fix it first: envhook lint)\n`);
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
  refused(t, r, /^envhook: option '--to <form>' argument 'sideways' is invalid/);
  r = envhook([f('a.yaml')]);
  refused(t, r, /^envhook: required option '--to <form>' not specified/);
});

// Valid annotations, but lint rejects the pod: a container and a volume it does not have, and a
// volume no container mounts (the kubelet would not set it up).
const LINT_REJECTS = `kind: Pod
metadata:
  annotations:
    envhook.io/env: '{"mian": [{"name": "A", "value": "1"}], "main": [{"name": "B", "valueFrom": {"fileKeyRef": {"volumeName": "cfg", "path": "a.env", "key": "B"}}}]}'
    envhook.io/serviceLinks: '{"*": false}'
spec:
  containers: [{name: main}]
  volumes: [{name: cfg, emptyDir: {}}]
`;

t.test('a manifest lint rejects: convert refuses in both directions, with lint first line, and writes nothing', async (t) => {
  const dir = t.testdir({ 'pod.yaml': LINT_REJECTS });
  const file = path.join(dir, 'pod.yaml');
  const lint = spawnSync(NODE, [path.join(root, 'dist/envhook.cjs'), 'lint', file], { encoding: 'utf8', timeout: 120_000 });
  t.equal(lint.status, 1, 'lint rejects it');
  const first = lint.stdout.split('\n')[0];
  t.equal(first, `${file}:4:5: envhook.io/env /mian: container "mian" is not in the pod (did you mean "main"?)`);
  for (const to of ['native', 'annotations']) {
    let r = envhook(['--to', to, file]);
    t.equal(r.status, 1, to);
    t.equal(r.stdout, '');
    t.equal(r.stderr, `envhook: ${first} (and 1 more: fix them first: envhook lint)\n`);
    r = envhook(['--to', to, '--write', file]);
    t.equal(r.status, 1);
    t.equal(fs.readFileSync(file, 'utf8'), LINT_REJECTS, 'the file is left as it was');
  }
  // With the volume mounted, one error is left.
  const mounted = LINT_REJECTS.replace('{name: main}', '{name: main, volumeMounts: [{name: cfg, mountPath: /c}]}');
  const r = envhook(['--to', 'native', '-'], mounted);
  refused(
    t,
    r,
    `envhook: <stdin>:4:5: envhook.io/env /mian: container "mian" is not in the pod (did you mean "main"?) (fix it first: envhook lint)\n`,
  );
});

const story1 = fs.readFileSync(path.join(root, 'examples/pods/kep-3721-story1.yaml'), 'utf8');

t.test(
  'several files without --write: one YAML stream, --- between them; a JSON file among them is refused naming the flags',
  async (t) => {
    const dir = t.testdir({
      'a.yaml': story2,
      'same.yaml': 'kind: ConfigMap\n',
      'b.yaml': '---\nkind: Secret\n',
      'p.json': '{"kind": "ConfigMap"}\n',
    });
    const f = (n: string) => path.join(dir, n);
    const one = envhook(['--to', 'native', f('a.yaml')]);
    let r = envhook(['--to', 'native', f('a.yaml'), f('same.yaml'), f('b.yaml')]);
    t.equal(r.status, 0, r.stderr);
    t.equal(r.stdout, `${one.stdout}---\nkind: ConfigMap\n---\nkind: Secret\n`, 'a file that starts with --- gets no second one');
    t.equal(r.stderr, one.stderr, 'the notes of each file');
    t.equal(fs.readFileSync(f('a.yaml'), 'utf8'), story2, 'nothing written');
    r = envhook(['--to', 'native', f('a.yaml'), f('p.json')]);
    refused(
      t,
      r,
      `envhook: ${f('p.json')} is JSON: several files cannot be printed as one; convert it alone, or use --write (in place) or --json\n`,
    );
  },
);

t.test('--to native of a pod left with no envhook annotation drops runtimeClassName: envhook, with a note', async (t) => {
  const r = envhook(['--to', 'native', '-'], story1);
  t.equal(r.status, 0, r.stderr);
  t.equal(
    r.stderr,
    '<stdin>:17:3: spec.runtimeClassName: note: removed: the pod has no envhook annotation left, and the native fields need no runtime class\n',
  );
  t.notMatch(r.stdout, /runtimeClassName/);
  t.match(r.stdout, /fileKeyRef:\n/);
  const kept = envhook(['--to', 'native', '-'], story2);
  t.match(kept.stdout, /\n {2}runtimeClassName: envhook\n/, 'story 2 keeps an envFrom annotation, and the handler with it');
});

t.test('--json: one array, an object a file (notes in it, the text, or written with --write); nothing on stderr', async (t) => {
  const dir = t.testdir({ 'a.yaml': story2, 'same.yaml': 'kind: ConfigMap\n' });
  const f = (n: string) => path.join(dir, n);
  const text = envhook(['--to', 'native', f('a.yaml')]).stdout;
  let r = envhook(['--to', 'native', '--json', f('a.yaml'), f('same.yaml')]);
  t.equal(r.status, 0, r.stderr);
  t.equal(r.stderr, '');
  const out = JSON.parse(r.stdout);
  t.same(
    out.map((o: Record<string, unknown>) => ({ ...o, notes: (o.notes as unknown[]).length })),
    [
      { file: f('a.yaml'), to: 'native', changed: true, written: false, notes: 2, text },
      { file: f('same.yaml'), to: 'native', changed: false, written: false, notes: 0, text: 'kind: ConfigMap\n' },
    ],
  );
  t.same(out[0].notes[0], {
    line: 11,
    column: 5,
    annotation: 'envhook.io/env',
    path: '/main',
    message: 'stays an annotation: the container also has envhook.io/envFrom sources, which must apply before these entries',
  });
  r = envhook(['--to', 'native', '--json', '--write', f('a.yaml'), f('same.yaml')]);
  t.equal(r.status, 0, r.stderr);
  t.same(
    JSON.parse(r.stdout).map((o: Record<string, unknown>) => [o.file, o.changed, o.written, o.text]),
    [
      [f('a.yaml'), true, true, null],
      [f('same.yaml'), false, false, null],
    ],
  );
  t.equal(fs.readFileSync(f('a.yaml'), 'utf8'), text, 'written in place');
  r = envhook(['--to', 'native', '--json', '-'], BAD);
  refused(t, r, 'envhook: <stdin>:4:5: envhook.io/serviceLinks /*: must be boolean (fix it first: envhook lint)\n');
});
