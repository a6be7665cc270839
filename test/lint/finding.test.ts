// A lint finding's two output forms and the summary line: one line each, whatever the strings hold.
import t from 'tap';
import { formatFinding, formatJson, summary, type Finding } from '../../src/lint/finding.ts';

const f = (over: Partial<Finding> = {}): Finding => ({
  file: 'pod.yaml',
  line: 3,
  column: 5,
  severity: 'error',
  annotation: 'envhook.io/env',
  path: '/app/0/name',
  message: 'missing field "name"',
  ...over,
});

t.test('file:line:column: annotation path: problem; a warning says so; no path, no gap', async (t) => {
  t.equal(formatFinding(f()), 'pod.yaml:3:5: envhook.io/env /app/0/name: missing field "name"');
  t.equal(formatFinding(f({ severity: 'warning', message: 'x' })), 'pod.yaml:3:5: envhook.io/env /app/0/name: warning: x');
  t.equal(formatFinding(f({ path: '' })), 'pod.yaml:3:5: envhook.io/env: missing field "name"');
});

t.test('a newline or control character in a name stays on one line, escaped', async (t) => {
  const line = formatFinding(f({ file: 'a\nb.yaml', path: '/app\r\n', message: 'bad\u0007' }));
  t.notMatch(line, /[\n\r\u0007]/);
  t.equal(line, 'a b.yaml:3:5: envhook.io/env /app : bad\\u0007');
});

t.test('JSON: every field, strings made one line', async (t) => {
  const out = JSON.parse(formatJson([f(), f({ severity: 'warning', annotation: 'envhook.io/\nx', message: 'm\u2028' })]));
  t.same(out[0], f());
  t.equal(out[1].annotation, 'envhook.io/ x');
  t.equal(out[1].message, 'm\\u2028');
  t.same(JSON.parse(formatJson([])), []);
});

t.test('summary: counts, singular and plural', async (t) => {
  t.equal(summary([]), '0 errors, 0 warnings');
  t.equal(summary([f()]), '1 error, 0 warnings');
  t.equal(summary([f(), f(), f({ severity: 'warning' })]), '2 errors, 1 warning');
});
