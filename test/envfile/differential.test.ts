// The KEP's rule, tested against real bash: every file the parser accepts gives exactly the
// variables `bash --posix -c 'set -a; . FILE; env -0'` sets, and near-miss files that bash
// reads differently are rejected with the right line and reason. Files come from seeded
// fast-check generators (gen.ts), so every run sees the same files.
import t from 'tap';
import fc from 'fast-check';
import { MAX_FILE_BYTES, parseEnvFile } from '../../src/envfile/envfile.ts';
import { EnvFileError } from '../../src/errors.ts';
import { BASH, sourceAll, sourceEach, type Sourced } from './bash.ts';
import { model, rejectedFile, render, validFile } from './gen.ts';
import { kubeletCases } from './kubelet-cases.ts';

const SEED = 3721;
const VALID_FILES = 500;
const REJECTED_FILES = 400;

const utf8 = (s: string) => Buffer.from(s, 'utf8');
const entries = (m: Map<string, Uint8Array>) => [...m].map(([k, v]) => [k, Buffer.from(v).toString('hex')]).sort();
const agrees = (r: Sourced, expected: Map<string, Uint8Array>) =>
  r.status === 0 && r.stderr === '' && JSON.stringify(entries(r.vars)) === JSON.stringify(entries(expected));
/** A test label for a file: its text cut short, ASCII only (a raw U+2028 or NEL would break TAP). */
const label = (bytes: Uint8Array) =>
  JSON.stringify(Buffer.from(bytes).toString('utf8').slice(0, 200)).replace(
    /[^\x20-\x7e]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
const asBytes = (m: Map<string, string>) => new Map([...m].map(([k, v]) => [k, utf8(v)] as [string, Uint8Array]));

t.test('the model: generated valid files parse to exactly what they define', async (t) => {
  fc.assert(
    fc.property(
      validFile().filter((f) => render(f).length <= MAX_FILE_BYTES),
      (file) => {
        const got = parseEnvFile(render(file));
        return JSON.stringify([...got]) === JSON.stringify([...model(file.items)]);
      },
    ),
    { seed: SEED, numRuns: 2000 },
  );
  t.pass('2000 files');
});

t.test('differential against bash', { skip: BASH ? false : 'bash not installed' }, async (t) => {
  const files = fc
    .sample(
      validFile().filter((f) => render(f).length <= MAX_FILE_BYTES),
      { seed: SEED, numRuns: VALID_FILES },
    )
    .map(render);
  const stats = {
    files: files.length,
    variables: 0,
    multiLine: 0,
    duplicates: 0,
    empty: 0,
    nonAscii: 0,
    bashQuotingBytes: 0,
    carriageReturns: 0,
    bytes: 0,
  };
  const parsed = files.map((bytes) => {
    const vars = parseEnvFile(bytes);
    stats.bytes += bytes.length;
    stats.variables += vars.size;
    for (const v of vars.values()) {
      if (v.includes('\n')) stats.multiLine++;
      if (v === '') stats.empty++;
      if (/[^\x00-\x7f]/.test(v)) stats.nonAscii++;
      if (/[\x01\x7f]/.test(v)) stats.bashQuotingBytes++; // CTLESC and CTLNUL, bash's internal quoting bytes
      if (v.includes('\r')) stats.carriageReturns++;
    }
    const text = Buffer.from(bytes).toString('latin1');
    for (const name of vars.keys()) if ((text.match(new RegExp(`(^|\\n)[ \\t]*${name}='`, 'g')) ?? []).length > 1) stats.duplicates++;
    return asBytes(vars);
  });
  t.comment(`valid files: ${JSON.stringify(stats)}`);
  t.ok(
    stats.multiLine > 50 &&
      stats.duplicates > 50 &&
      stats.empty > 20 &&
      stats.nonAscii > 50 &&
      stats.bashQuotingBytes > 10 &&
      stats.carriageReturns > 10,
    'the sample has multi-line, duplicate, empty, non-ASCII, \\x01/\\x7f and CR values',
  );

  for (const locale of [undefined, 'C.UTF-8']) {
    t.test(`${files.length} accepted files, locale ${locale ?? 'POSIX'}`, async (t) => {
      const start = Date.now();
      const { baseline, results } = await sourceAll(files, locale);
      t.comment(`bash exported ${baseline.join(' ')} by itself; ${files.length} files sourced in ${Date.now() - start} ms`);
      let agreed = 0;
      results.forEach((r, i) => {
        if (agrees(r, parsed[i]!)) agreed++;
        else
          t.same(
            { status: r.status, stderr: r.stderr, vars: entries(r.vars) },
            { status: 0, stderr: '', vars: entries(parsed[i]!) },
            `file ${i}: ${label(files[i]!)}`,
          );
      });
      t.equal(agreed, files.length, `bash agrees on all ${files.length} files`);
    });
  }

  t.test('the batch gives what the literal command gives', async (t) => {
    const some = files.slice(0, 25);
    const batch = (await sourceAll(some)).results;
    const each = (await sourceEach(some)).results;
    each.forEach((r, i) => t.same(entries(r.vars), entries(batch[i]!.vars), `file ${i}`));
  });

  t.test('the accepted kubelet cases', async (t) => {
    const cases = kubeletCases().filter((c) => !c.rejected);
    const { results } = await sourceAll(cases.map((c) => utf8(c.input)));
    cases.forEach((c, i) => t.ok(agrees(results[i]!, asBytes(parseEnvFile(utf8(c.input)))), c.name));
  });

  t.test(
    `${REJECTED_FILES} near-miss files: rejected at the defect; bash reads them otherwise, or agrees with a policy rejection`,
    async (t) => {
      const files = fc.sample(rejectedFile, { seed: SEED, numRuns: REJECTED_FILES });
      const { results } = await sourceAll(files.map((f) => f.bytes));
      const byKind = new Map<string, { n: number; diverges: boolean }>();
      files.forEach((f, i) => {
        const what = `${f.kind}: ${label(f.bytes)}`;
        let got: unknown = 'accepted';
        try {
          parseEnvFile(f.bytes);
        } catch (err) {
          got = err instanceof EnvFileError ? { line: err.line, reason: err.reason } : String(err);
        }
        t.same(got, { line: f.line, reason: f.reason }, what);
        const bashAgrees = agrees(results[i]!, f.naive);
        if (f.diverges) t.notOk(bashAgrees, `bash does not read it naively: ${what}`);
        else t.ok(bashAgrees, `bash reads it naively (a policy rejection): ${what}`);
        const k = byKind.get(f.kind) ?? { n: 0, diverges: f.diverges };
        k.n++;
        byKind.set(f.kind, k);
      });
      t.comment(`defect kinds: ${[...byKind].map(([k, s]) => `${k} ${s.n}${s.diverges ? '' : ' (policy)'}`).join(', ')}`);
      t.ok(byKind.size >= 20, `${byKind.size} kinds of defect`);
    },
  );
});
