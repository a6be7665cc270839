// runLint and runConvert, the interface of dist/envhook-tools.cjs, on real files.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { runConvert, runLint } from '../src/tools.ts';

const native = `apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  enableServiceLinks: false
  containers: [{name: app}]
`;
const annotated = `apiVersion: v1
kind: Pod
metadata:
  name: p
  annotations:
    envhook.io/serviceLinks: '{"ap":false}'
spec:
  containers: [{name: app}]
`;

t.test('runLint: findings on stdout, the summary on stderr, failed on an error; JSON with --format json', async (t) => {
  const dir = t.testdir({ 'a.yaml': annotated, 'b.yaml': native });
  const files = ['a.yaml', 'b.yaml'].map((f) => path.join(dir, f));
  const text = runLint(files, { format: 'text', mode: 'nri' });
  t.equal(text.failed, true);
  t.equal(text.stdout, `${files[0]}:6:5: envhook.io/serviceLinks /ap: container "ap" is not in the pod (did you mean "app"?)\n`);
  t.equal(text.stderr, '1 error, 0 warnings\n');
  t.same(text.writes, []);
  const json = runLint(files, { format: 'json', mode: 'nri' });
  t.equal(json.stderr, '');
  t.equal(json.failed, true);
  t.match(JSON.parse(json.stdout), [{ file: files[0], severity: 'error', annotation: 'envhook.io/serviceLinks' }]);

  const clean = runLint([files[1]!], { format: 'text', mode: 'nri' });
  t.same(clean, { stdout: '', stderr: '0 errors, 0 warnings\n', failed: false, writes: [] });
});

t.test('runLint: a missing file throws before any output', async (t) => {
  const dir = t.testdir({ 'a.yaml': native });
  t.throws(() => runLint([path.join(dir, 'a.yaml'), path.join(dir, 'missing.yaml')], { format: 'text', mode: 'shim' }), {
    name: 'EnvhookError',
  });
});

t.test('runConvert: stdout is every file converted in order; --write lists only the changed files', async (t) => {
  const unchanged = `apiVersion: v1\nkind: Pod\nmetadata: {name: q}\nspec:\n  containers: [{name: app}]\n`;
  const dir = t.testdir({ 'a.yaml': native, 'b.yaml': unchanged });
  const files = ['a.yaml', 'b.yaml'].map((f) => path.join(dir, f));
  const out = runConvert(files, { to: 'annotations', write: false });
  t.equal(out.failed, false);
  t.equal(out.stderr, '');
  t.same(out.writes, []);
  t.ok(out.stdout.endsWith(`---\n${unchanged}`), 'the unchanged file comes back as it was, after the first and a ---');
  t.match(out.stdout, /envhook\.io\/serviceLinks: '\{"\*":false\}'/);
  t.notMatch(out.stdout, /enableServiceLinks/);

  const w = runConvert(files, { to: 'annotations', write: true });
  t.equal(w.stdout, '');
  t.same(
    w.writes.map((x) => x.file),
    [files[0]],
  );
  t.equal(w.writes[0]!.text, out.stdout.slice(0, out.stdout.length - unchanged.length - '---\n'.length));
  t.equal(fs.readFileSync(files[0]!, 'utf8'), native, 'runConvert itself writes nothing');
});

t.test('runConvert: what stays is a note on stderr', async (t) => {
  const dir = t.testdir({
    'a.yaml': `kind: Pod\nmetadata:\n  annotations:\n    envhook.io/serviceLinks: '{"app":false}'\nspec:\n  containers: [{name: app}]\n`,
  });
  const out = runConvert([path.join(dir, 'a.yaml')], { to: 'native', write: false });
  t.equal(
    out.stderr,
    `${path.join(dir, 'a.yaml')}:4:5: envhook.io/serviceLinks: note: stays an annotation: only {"*": false} has a native form (enableServiceLinks: false); per-container switches have none\n`,
  );
  t.equal(out.stdout, fs.readFileSync(path.join(dir, 'a.yaml'), 'utf8'));
});
