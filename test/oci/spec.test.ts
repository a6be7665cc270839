import t, { type Test } from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { loadSpec, flushSpec } from '../../src/oci/spec.ts';

function bundle(t: Test, text: string, mode = 0o640): string {
  const dir = t.testdir({ 'config.json': text });
  fs.chmodSync(path.join(dir, 'config.json'), mode);
  return dir;
}

t.test('flush rewrites atomically, keeps unknown fields, big integers and the file mode', async (t) => {
  const text =
    JSON.stringify({ ociVersion: '1.0.2', process: { env: ['A=1'] }, 'x-vendor': { deep: [1, 2] } }, null, 2).replace(
      '"ociVersion"',
      '"big": 18446744073709551615,\n  "ociVersion"',
    ) + '\n';
  const dir = bundle(t, text);
  const loaded = loadSpec(dir);
  t.equal(loaded.indent, '  ');
  const spec = loaded.spec as { process: { env: string[] } };
  flushSpec(loaded, { ...loaded.spec, process: { ...spec.process, env: [...spec.process.env, 'B=2'] } });
  const after = fs.readFileSync(path.join(dir, 'config.json'), 'utf8');
  t.match(after, /"big": 18446744073709551615,/);
  t.match(after, /"x-vendor": \{\n    "deep": \[/);
  t.same(JSON.parse(after).process.env, ['A=1', 'B=2']);
  t.equal(fs.statSync(path.join(dir, 'config.json')).mode & 0o777, 0o640);
  t.same(fs.readdirSync(dir), ['config.json'], 'no temporary file left');
});

t.test('an unchanged spec is not rewritten', async (t) => {
  const dir = bundle(t, '{"ociVersion":"1.0.2"}');
  const before = fs.statSync(path.join(dir, 'config.json')).ino;
  const loaded = loadSpec(dir);
  flushSpec(loaded, loaded.spec);
  t.equal(fs.statSync(path.join(dir, 'config.json')).ino, before);
});

t.test('bad config.json: one clear message each', async (t) => {
  const cases: [string, string | null, RegExp][] = [
    ['missing', null, /^cannot read .*config\.json: no such file or directory \(ENOENT\)$/],
    ['truncated', '{"process":', /config\.json is not valid JSON \(truncated\)$/],
    ['not an object', '[1,2]', /config\.json: not a JSON object$/],
    ['env not strings', '{"process":{"env":[1]}}', /config\.json: \/process\/env\/0: must be string$/],
  ];
  for (const [name, text, msg] of cases) {
    const dir = text === null ? t.testdir({}) : bundle(t, text);
    t.throws(() => loadSpec(dir), { message: msg }, name);
  }
});
