// The flush of a bundle: config.json written only when the spec changed, the exec sidecar of a
// create renewed (an earlier one removed, a new one only when env changed), precreate's output.
import t, { type Test } from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { flushBundle, specOutput } from '../../src/bundle/flush.ts';
import { EXEC_SIDECAR } from '../../src/bundle/exec-sidecar.ts';
import { applyToSpec } from '../../src/apply/spec-applier.ts';
import { loadSpec, type Spec } from '../../src/oci/spec.ts';
import { silentLogger } from '../../src/log.ts';

const ORIGINAL = '{\n  "process": {\n    "env": [ "PATH=/bin" ]\n  }\n}\n';
const changed = (spec: Spec) =>
  applyToSpec(spec, {
    container: 'app',
    sandbox: false,
    owners: [],
    mark: 'sha256:x',
    env: { env: ['PATH=/bin', 'A=1'], values: new Map([['A', '1']]), set: [{ name: 'A', source: 'value' }], removed: [], skipped: [] },
  });

function bundle(t: Test) {
  const dir = t.testdir({ 'config.json': ORIGINAL });
  return { dir, config: path.join(dir, 'config.json'), sidecar: path.join(dir, EXEC_SIDECAR) };
}

t.test('inject: config.json written laid out like the original, untouched when nothing changed', async (t) => {
  const b = bundle(t);
  const loaded = loadSpec(b.dir);
  const before = fs.statSync(b.config).ino;
  flushBundle(loaded, loaded.spec);
  t.equal(fs.statSync(b.config).ino, before, 'the same spec: no write');
  flushBundle(loaded, changed(loaded.spec));
  const text = fs.readFileSync(b.config, 'utf8');
  t.match(text, /^\{\n {2}"process"/, 'indented like the original');
  t.same(JSON.parse(text).process.env, ['PATH=/bin', 'A=1']);
  t.notOk(fs.existsSync(b.sidecar), 'no sidecar without the create');
});

t.test("the shim's create: an earlier sidecar removed, a new one when env changed", async (t) => {
  const b = bundle(t);
  fs.writeFileSync(b.sidecar, 'stale');
  const loaded = loadSpec(b.dir);
  flushBundle(loaded, loaded.spec, { id: 'c1', log: silentLogger, about: {} });
  t.notOk(fs.existsSync(b.sidecar), 'nothing changed: the earlier sidecar is gone, none written');
  flushBundle(loaded, changed(loaded.spec), { id: 'c1', log: silentLogger, about: {} });
  const text = fs.readFileSync(b.sidecar, 'utf8');
  t.same(text.split('\n').slice(1, 3), ['c1', '["PATH=/bin"]'], "written for this container, with the original's env, compact");
  t.equal(fs.statSync(b.sidecar).mode & 0o777, 0o600);
});

t.test('precreate: the input back byte for byte, or the new spec laid out like it', async (t) => {
  const spec: Spec = JSON.parse(ORIGINAL);
  t.equal(specOutput(ORIGINAL, spec, spec), ORIGINAL);
  const out = specOutput(ORIGINAL, spec, changed(spec));
  t.match(out, /^\{\n {2}"process"/);
  t.ok(out.endsWith('}\n'), 'final newline kept');
});
