// docs/runtimes.md's table of runtime versions stays true: a row marked "tested in CI" names
// e2e files that exist and name that runtime (and, for containerd, its version), and every
// containerd version the CRI harness runs has such a row.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { REPO } from './helpers/bundle.ts';
import { SUITE_OF } from './helpers/cri/containerd.ts';

const doc = fs.readFileSync(path.join(REPO, 'docs/runtimes.md'), 'utf8');
const section = doc.slice(doc.indexOf('## Runtimes and versions'), doc.indexOf('## The runtime front'));
const rows = section
  .split('\n')
  .filter((l) => l.startsWith('| ') && !l.startsWith('| runtime '))
  .map((l) =>
    l
      .split('|')
      .slice(1, -1)
      .map((c) => c.trim()),
  )
  .map(([runtime = '', version = '', nri = '', shim = '', nriMode = '', files = '']) => ({
    runtime,
    version,
    nri,
    modes: [shim, nriMode],
    files: files
      .split(',')
      .map((f) => f.trim())
      .filter(Boolean),
  }));

t.ok(rows.length >= 9, `the table has its rows (${rows.length})`);
for (const row of rows) {
  t.test(`${row.runtime} ${row.version}`, async (t) => {
    t.ok(row.nri, 'says which NRI it speaks');
    for (const mode of row.modes)
      t.match(mode, /^(tested in CI|tested by hand|not tested|not supported)\b/, 'each mode is one of the four');
    const inCi = row.modes.some((m) => m.startsWith('tested in CI'));
    if (!inCi) return t.same(row.files, [], 'no e2e file for a version not tested in CI');
    t.ok(row.files.length > 0, 'tested in CI: names its e2e files');
    const minor = /^\d+\.\d+/.exec(row.version)?.[0];
    for (const f of row.files) {
      const file = path.join(REPO, 'test/e2e', f);
      if (!t.ok(fs.existsSync(file), `${f} exists`)) continue;
      const text = fs.readFileSync(file, 'utf8');
      t.match(text.toLowerCase(), row.runtime.split(' ')[0]!.toLowerCase(), `${f} names ${row.runtime}`);
      if (row.runtime === 'containerd') t.ok(text.includes(`containerd ${minor}`), `${f} names containerd ${minor}`);
    }
  });
}

t.test('every containerd the CRI harness runs has a row tested in CI', async (t) => {
  for (const v of ['1.6', ...Object.keys(SUITE_OF)]) {
    t.ok(
      rows.some((r) => r.runtime === 'containerd' && r.version.startsWith(v) && r.modes.some((m) => m.startsWith('tested in CI'))),
      `containerd ${v}`,
    );
  }
});
