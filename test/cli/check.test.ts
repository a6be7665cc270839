// `envhook check` end to end: the bundle `npm run build` makes (dist/envhook.cjs) and the
// source entry, each run by the project's Node 24, with exact stdout, stderr and status.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { COMPILE_CACHE_ENV } from '../helpers/compile-cache.ts';
import { untapped } from '../helpers/untapped.ts';

const root = path.resolve(import.meta.dirname, '../..');
const NODE = path.join(root, 'node_modules/.bin/node');
const ENTRIES = ['dist/envhook.cjs', 'src/cli/main.ts'];
const CANARY = 'CANARY_c4e7';

interface Run {
  status: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Run as an admin runs it, without the test runner's NODE_OPTIONS; the sources with Node's compile cache. */
function envhook(entry: string, args: string[], input?: string): Run {
  const env = { ...process.env, ...(entry.startsWith('src/') ? COMPILE_CACHE_ENV : {}) };
  const r = spawnSync(...untapped(NODE, [path.join(root, entry), ...args]), {
    encoding: 'utf8',
    timeout: 15_000,
    cwd: root,
    input: input ?? '',
    env,
  });
  return { status: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr };
}

if (!fs.existsSync(path.join(root, 'dist/envhook.cjs'))) throw new Error('dist/envhook.cjs missing: run `npm run build` (npm test does)');

for (const entry of ENTRIES) {
  t.test(entry, async (t) => {
    const dir = t.testdir({
      'good.env': `# settings\nA='${CANARY}'\n  B='multi\nline ${CANARY}'  # note\nC=''\nA='${CANARY} again'\n`,
      'one.env': "ONLY='1'",
      'empty.env': '',
      'bad.env': `OK='${CANARY}'\nBAD=${CANARY}\n`,
      'crlf.env': `A='${CANARY}'\r\n`,
      'nul.env': `A='x'\n\nB='${CANARY}\0'\n`,
      'unclosed.env': `A='x'\nB='${CANARY}\n${CANARY}\n`,
      'large.env': `# ${CANARY}\n`.repeat(5000),
      'huge.env': `A='${CANARY}'\n`.repeat(700_000),
      sub: {},
    });
    const f = (name: string) => path.join(dir, name);
    fs.symlinkSync(f('good.env'), f('link.env'));
    t.equal(spawnSync('mkfifo', [f('fifo')]).status, 0, 'mkfifo');

    const cases: [string, string[], Run][] = [
      ['valid file: the count', [f('good.env')], { status: 0, signal: null, stdout: '3 variables\n', stderr: '' }],
      [
        '--names: names in order of first definition',
        [f('good.env'), '--names'],
        { status: 0, signal: null, stdout: '3 variables\nA\nB\nC\n', stderr: '' },
      ],
      ['--names before the file', ['--names', f('one.env')], { status: 0, signal: null, stdout: '1 variable\nONLY\n', stderr: '' }],
      ['empty file', [f('empty.env')], { status: 0, signal: null, stdout: '0 variables\n', stderr: '' }],
      ['a symlink is followed', [f('link.env')], { status: 0, signal: null, stdout: '3 variables\n', stderr: '' }],
      [
        'unquoted value',
        [f('bad.env'), '--names'],
        { status: 1, signal: null, stdout: '', stderr: `envhook: ${f('bad.env')}: line 2: value must be single-quoted\n` },
      ],
      [
        'CRLF',
        [f('crlf.env')],
        { status: 1, signal: null, stdout: '', stderr: `envhook: ${f('crlf.env')}: line 1: carriage return outside quotes\n` },
      ],
      ['NUL', [f('nul.env')], { status: 1, signal: null, stdout: '', stderr: `envhook: ${f('nul.env')}: line 3: NUL byte\n` }],
      [
        'unclosed quote: the line the value started',
        [f('unclosed.env')],
        { status: 1, signal: null, stdout: '', stderr: `envhook: ${f('unclosed.env')}: line 2: unclosed quote\n` },
      ],
      [
        'over 64 KiB',
        [f('large.env')],
        { status: 1, signal: null, stdout: '', stderr: `envhook: ${f('large.env')}: file larger than 65536 bytes\n` },
      ],
      [
        '10 MB: only 64 KiB + 1 read',
        [f('huge.env')],
        { status: 1, signal: null, stdout: '', stderr: `envhook: ${f('huge.env')}: file larger than 65536 bytes\n` },
      ],
      [
        'a FIFO without a writer does not hang',
        [f('fifo')],
        { status: 1, signal: null, stdout: '', stderr: `envhook: ${f('fifo')}: not a regular file\n` },
      ],
      ['a directory', [f('sub')], { status: 1, signal: null, stdout: '', stderr: `envhook: ${f('sub')}: not a regular file\n` }],
      ['a character device', ['/dev/zero'], { status: 1, signal: null, stdout: '', stderr: 'envhook: /dev/zero: not a regular file\n' }],
      [
        'missing file',
        [f('nope.env')],
        { status: 1, signal: null, stdout: '', stderr: `envhook: cannot read ${f('nope.env')}: no such file or directory (ENOENT)\n` },
      ],
      ['no file argument', [], { status: 1, signal: null, stdout: '', stderr: "envhook: missing required argument 'file'\n" }],
    ];
    for (const [name, args, expected] of cases) {
      const got = envhook(entry, ['check', ...args]);
      t.same(got, expected, name);
      t.notOk(got.stdout.includes(CANARY) || got.stderr.includes(CANARY), `${name}: no canary`);
    }
  });
}

for (const entry of ENTRIES) {
  t.test(`${entry}: check - reads the env file from stdin`, async (t) => {
    const cases: [string, string, string[], Run][] = [
      ['valid', `A='${CANARY}'\nB='x'\n`, ['--names'], { status: 0, signal: null, stdout: '2 variables\nA\nB\n', stderr: '' }],
      ['empty stdin', '', [], { status: 0, signal: null, stdout: '0 variables\n', stderr: '' }],
      [
        'an error names <stdin> and the line',
        `OK='x'\nBAD=${CANARY}\n`,
        [],
        { status: 1, signal: null, stdout: '', stderr: 'envhook: <stdin>: line 2: value must be single-quoted\n' },
      ],
      [
        'over 64 KiB: the parser message, not all of stdin read',
        `A='${CANARY}'\n`.repeat(700_000),
        [],
        { status: 1, signal: null, stdout: '', stderr: 'envhook: <stdin>: file larger than 65536 bytes\n' },
      ],
    ];
    for (const [name, input, args, expected] of cases) {
      const got = envhook(entry, ['check', '-', ...args], input);
      t.same(got, expected, name);
      t.notOk(got.stdout.includes(CANARY) || got.stderr.includes(CANARY), `${name}: no canary`);
    }
  });

  t.test(`${entry}: check --json prints one object, the file's error in it`, async (t) => {
    const dir = t.testdir({ 'good.env': `A='${CANARY}'\nB='y'\nA='z'\n`, 'bad.env': `OK='x'\n\nBAD=${CANARY}\n` });
    const f = (name: string) => path.join(dir, name);
    const json = (args: string[], input?: string) => {
      const r = envhook(entry, ['check', '--json', ...args], input);
      t.notOk(r.stdout.includes(CANARY) || r.stderr.includes(CANARY), `${args.join(' ')}: no canary`);
      return { ...r, doc: r.stdout ? JSON.parse(r.stdout) : undefined };
    };
    const good = json([f('good.env')]);
    t.same([good.status, good.stderr], [0, '']);
    t.same(good.doc, { file: f('good.env'), ok: true, variables: 2, names: ['A', 'B'], error: null });
    const bad = json([f('bad.env')]);
    t.same([bad.status, bad.stderr], [1, ''], 'an invalid file: exit 1, nothing on stderr (as lint --format json)');
    t.same(bad.doc, {
      file: f('bad.env'),
      ok: false,
      variables: null,
      names: null,
      error: { line: 3, message: 'value must be single-quoted' },
    });
    const stdin = json(['-'], `BAD=${CANARY}\n`);
    t.same(
      [stdin.status, stdin.doc],
      [1, { file: '<stdin>', ok: false, variables: null, names: null, error: { line: 1, message: 'value must be single-quoted' } }],
    );
    const big = json(['-'], `# ${CANARY}\n`.repeat(6000));
    t.same(big.doc?.error, { line: null, message: 'file larger than 65536 bytes' }, 'a whole-file error has no line');
    const missing = json([f('nope.env')]);
    t.same(
      [missing.status, missing.stdout, missing.stderr],
      [1, '', `envhook: cannot read ${f('nope.env')}: no such file or directory (ENOENT)\n`],
      'a file that cannot be read: the one line, nothing on stdout (as lint)',
    );
  });
}

// docs/pods.md#env-files: the refusals its table shows, and every difference from the kubelet's
// parser on envhook's side, as `envhook check -` reports them; each line is in the page.
t.test('the env-file refusals and kubelet differences docs/pods.md lists, line for line', async (t) => {
  const page = fs.readFileSync(path.join(root, 'docs/pods.md'), 'utf8');
  const refused: [string, string][] = [
    ['A=1\n', 'line 1: value must be single-quoted'],
    ['A="x"\n', 'line 1: value must be single-quoted'],
    ['A=\n', 'line 1: value must be single-quoted'],
    ["export B='x'\n", "line 1: 'export' not allowed: write NAME='value'"],
    ["  export\tB='x' # c\n", "line 1: 'export' not allowed: write NAME='value'"],
    ["A ='x'\n", "line 1: blank before '='"],
    ["1A='x'\n", 'line 1: invalid variable name'],
    ["A-B='x'\n", 'line 1: invalid variable name'],
    ["A='x'#c\n", 'line 1: text after closing quote'],
    ["A='x' y\n", 'line 1: text after closing quote'],
    ["A='it''s'\n", 'line 1: adjacent quoted strings'],
    ["A='x\n", 'line 1: unclosed quote'],
    ["A='x'\r\n", 'line 1: carriage return outside quotes'],
    ['HELLO\n', "line 1: missing '='"],
    ["='x'\n", 'line 1: empty variable name'],
    // the kubelet skips these lines (a blank after `=`, then anything): envhook refuses them
    ["A= 'x'\n", 'line 1: value must be single-quoted'],
    ['A= x\n', 'line 1: value must be single-quoted'],
    ['A= "x"\n', 'line 1: value must be single-quoted'],
    ["A= 'x\n", 'line 1: value must be single-quoted'],
    ['A= \n', 'line 1: value must be single-quoted'],
    // a CR in a comment or at the start of a line, no line feed after it: the kubelet reads on
    ["# note\rA='x'\n", 'line 1: carriage return outside quotes'],
    ["A='x'\n\rB='y'\n", 'line 2: carriage return outside quotes'],
  ];
  for (const [input, line] of refused) {
    t.same(
      envhook('dist/envhook.cjs', ['check', '-'], input),
      { status: 1, signal: null, stdout: '', stderr: `envhook: <stdin>: ${line}\n` },
      JSON.stringify(input),
    );
    const reason = line.replace(/^line \d+: /, '');
    t.ok(page.includes(reason), `docs/pods.md names "${reason}"`);
  }
  // One line of exactly 65536 bytes and no line feed: the kubelet's line reader refuses it
  // (token too long); envhook reads it (its limit is the whole file's, inclusive).
  const comment = '#'.padEnd(65536, 'x');
  const assignment = "A='x' #".padEnd(65536, 'x');
  t.equal(Buffer.byteLength(comment) + Buffer.byteLength(assignment), 2 * 65536);
  t.same(
    envhook('dist/envhook.cjs', ['check', '-'], comment),
    { status: 0, signal: null, stdout: '0 variables\n', stderr: '' },
    'a 65536-byte comment',
  );
  t.same(
    envhook('dist/envhook.cjs', ['check', '-', '--names'], assignment),
    { status: 0, signal: null, stdout: '1 variable\nA\n', stderr: '' },
    'a 65536-byte line with a value and a comment',
  );
  t.same(
    envhook('dist/envhook.cjs', ['check', '-'], comment + '\n'),
    { status: 1, signal: null, stdout: '', stderr: 'envhook: <stdin>: file larger than 65536 bytes\n' },
    'one byte more is the file limit',
  );
  t.ok(page.includes('one line of exactly 65536 bytes with no line feed'), 'docs/pods.md lists the 65536-byte line');
});
