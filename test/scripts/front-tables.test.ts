// The front's tables are written from the TypeScript ones (scripts/front-tables.ts, run by the
// build): the shipped front is what they render, a changed table changes what the front does,
// and a line that names no table (or a table no line) fails the build with the line's number.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { escapesOf, frontTables, renderFront } from '../../scripts/front-tables.ts';
import { FRONT, fakeExecutable, runFront } from '../helpers/shim/front.ts';

const text = fs.readFileSync(FRONT, 'utf8');

t.test('the shipped front is the one its tables render', async (t) => {
  t.equal(renderFront(text), text);
  t.match(text, /^\t\troot \| log \| log-format \| criu \| rootless \| log-level \| cgroup-manager\) # from GLOBAL_VALUE_OPTIONS$/m);
  t.match(
    text,
    /^mark_re='envhook\\\.io\(\/\|\\\\\/\)applied-env\|\\\\u00\(2\[dDeEfF\]\|6\[14589bBcCeEfF\]\|7\[06\]\)' # from APPLIED_ENV_KEY$/m,
  );
});

t.test('a global value option added to the table: the front skips its value too', async (t) => {
  const dir = t.testdir({});
  const tables = frontTables();
  const arm = (tables.GLOBAL_VALUE_OPTIONS as { arm: string[] }).arm;
  const front = path.join(dir, 'envhook-runtime');
  fs.writeFileSync(front, renderFront(text, { ...tables, GLOBAL_VALUE_OPTIONS: { arm: [...arm, 'new-global'] } }), { mode: 0o755 });
  const runtime = fakeExecutable(path.join(dir, 'runtime'), 'runtime');
  const envhook = fakeExecutable(path.join(dir, 'envhook'), 'envhook');
  const env = { ENVHOOK_RUNTIME: runtime, ENVHOOK_BIN: envhook };
  const argv = ['--new-global', 'create', 'state', 'x'];
  // the shipped front takes `create` as the subcommand; the new table, `state`
  t.same(runFront(argv, env).lines, ['envhook', 'shim', ...argv, 'runtime', ...argv]);
  t.same(runFront(argv, env, { front }).lines, ['runtime', ...argv]);
});

t.test('a line naming no table, or a table no line names: the build fails with the line', async (t) => {
  t.throws(() => renderFront(`${text}\n\tnope) ;; # from NO_SUCH_TABLE`), {
    message: `hooks/envhook-runtime:${text.split('\n').length + 1}: no table NO_SUCH_TABLE in scripts/front-tables.ts`,
  });
  t.throws(() => renderFront(text.replace(' # from PROCESS_OPTIONS', '')), {
    message: 'hooks/envhook-runtime: no line "# from PROCESS_OPTIONS"',
  });
  t.throws(() => renderFront(text.replace(/^applied_end=.*$/m, '\tapplied) ;; # from APPLIED_KEY_END')), {
    message: /^hooks\/envhook-runtime:\d+: APPLIED_KEY_END is a value, this line a case arm$/,
  });
});

t.test('escapesOf: a \\u00XX escape of each character of the text, in either case, and of no other', async (t) => {
  t.equal(escapesOf('envhook.io/'), '\\\\u00(2[eEfF]|6[589bBeEfF]|76)');
  const re = escapesOf('envhook.io/'); // two backslashes: the ERE of one
  const grep = (line: string) => spawnSync('grep', ['-Eq', re], { input: line }).status;
  for (const c of new Set('envhook.io/')) {
    const hex = c.charCodeAt(0).toString(16).padStart(4, '0');
    t.equal(grep(`"\\u${hex}"`), 0, `\\u${hex}`);
    t.equal(grep(`"\\u${hex.toUpperCase()}"`), 0, `\\u${hex.toUpperCase()}`);
  }
  for (const other of ['\\u0041', '\\u0061', '\\u002c', '\\u0077']) t.equal(grep(`"${other}"`), 1, other);
  t.throws(() => escapesOf('é'), { message: 'escapesOf: "é" is not ASCII' });
});
