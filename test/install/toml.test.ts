// parseToml reads a runtime's TOML; its error names the file and the position and never quotes
// the text (smol-toml's own message does). table/tableAt walk sub-tables only.
import t from 'tap';
import { parseToml, table, tableAt } from '../../src/install/toml.ts';
import { EnvhookError } from '../../src/errors.ts';

t.test('a valid file parses to plain tables', async (t) => {
  t.same(parseToml('version = 3\n[plugins."io.containerd.cri.v1.runtime"]\nk = "v"\n', '/etc/c.toml'), {
    version: 3,
    plugins: { 'io.containerd.cri.v1.runtime': { k: 'v' } },
  });
});

t.test('a syntax error: file, line and column, and not a byte of the text', async (t) => {
  const canary = 'CANARY-7f3a';
  let err: unknown;
  try {
    parseToml(`a = 1\nsecret = "${canary}\n`, '/etc/c.toml');
  } catch (e) {
    err = e;
  }
  t.type(err, EnvhookError);
  t.match((err as Error).message, /^\/etc\/c\.toml is not valid TOML \(line 2, column \d+\)$/);
  t.notMatch((err as Error).message, canary);
  t.equal(((err as Error).cause as Error).message, 'TOML syntax error', 'the cause carries no text either');
});

t.test('table: a sub-table, or undefined for a scalar, an array, a date or nothing', async (t) => {
  const doc = parseToml('s = 1\na = [1]\nd = 1979-05-27T07:32:00Z\n[x.y]\nz = 1\n', 'f');
  t.same(table(doc, 'x'), { y: { z: 1 } });
  for (const k of ['s', 'a', 'd', 'missing']) t.equal(table(doc, k), undefined, k);
  t.equal(table(undefined, 'x'), undefined);
  t.same(tableAt(doc, 'x', 'y'), { z: 1 });
  t.equal(tableAt(doc, 'x', 'y', 'z'), undefined, 'a scalar at the end of the path');
  t.equal(tableAt(doc, 'nope', 'y'), undefined);
  t.same(tableAt(doc), doc, 'no keys: the table itself');
});
