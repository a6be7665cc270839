// The runtime front's budget (docs/design.md, "What stays in sh, and its budget"): the real
// hooks/envhook-runtime, as the build leaves it, within 12 KiB and 300 code lines; the design
// states the same figures.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { REPO } from '../helpers/bundle.ts';
import { FRONT } from '../helpers/shim/front.ts';

const MAX_BYTES = 12_288;
const MAX_CODE_LINES = 300;

/** Lines neither blank nor only a comment (a `#` first; the shebang is one). */
const codeLines = (text: string): number => text.split('\n').filter((l) => !/^\s*(#|$)/.test(l)).length;

t.test('the front is within its byte and code-line budget', async (t) => {
  const text = fs.readFileSync(FRONT, 'utf8');
  const bytes = Buffer.byteLength(text);
  const code = codeLines(text);
  t.ok(bytes <= MAX_BYTES, `hooks/envhook-runtime: ${bytes} bytes, budget ${MAX_BYTES}`);
  t.ok(code <= MAX_CODE_LINES, `hooks/envhook-runtime: ${code} code lines, budget ${MAX_CODE_LINES}`);
});

t.test('code lines: a comment line or a blank one is not code, a trailing comment is', async (t) => {
  t.equal(codeLines('#!/bin/sh\n\n# why\n\t# indented why\nset -u\n\tcase $x in a) ;; # from NAME\n   \n'), 2);
});

t.test('docs/design.md states the budget the test enforces', async (t) => {
  const design = fs.readFileSync(path.join(REPO, 'docs/design.md'), 'utf8');
  const section = design.slice(design.indexOf('### What stays in sh, and its budget'));
  t.match(section, `at most **${MAX_BYTES.toLocaleString('en-US')} bytes** (12 KiB) and **${MAX_CODE_LINES} code lines**`);
  t.match(section, 'test/hooks/front-budget.test.ts');
});
