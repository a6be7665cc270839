// The config.json applier: pure, a new spec with the env and the mark, or the very same object.
import t from 'tap';
import { applyToSpec, setAnnotation, setProcessEnv } from '../../src/apply/spec-applier.ts';
import type { Changes } from '../../src/plan/changes.ts';
import type { Spec } from '../../src/oci/spec.ts';

const spec: Spec = { ociVersion: '1.0.2', process: { args: ['sh'], env: ['A=1'] }, annotations: { x: 'y' } };
const changes = (env: Changes['env'], mark?: string): Changes => ({ container: 'app', sandbox: false, env, owners: [], mark });
const resolved = { env: ['A=1', 'B=2'], values: new Map([['B', '2']]), set: [{ name: 'B', source: 'value' }], removed: [], skipped: [] };

t.test('env and both marks (digest, names); the input unchanged', async (t) => {
  const out = applyToSpec(spec, changes(resolved, 'sha256:00'));
  t.same(out, {
    ociVersion: '1.0.2',
    process: { args: ['sh'], env: ['A=1', 'B=2'] },
    annotations: { x: 'y', 'envhook.io/applied': 'sha256:00', 'envhook.io/applied-env': '{"set":["B"],"removed":[]}' },
  });
  t.same(spec.process, { args: ['sh'], env: ['A=1'] });
  t.same(spec.annotations, { x: 'y' });
});

t.test('nothing to apply: the same object, so flushSpec writes nothing', async (t) => {
  t.equal(applyToSpec(spec, changes(undefined)), spec);
  t.equal(applyToSpec(spec, { ...changes(undefined), sandbox: true }), spec);
});

t.test('the setters make new objects and keep every other field', async (t) => {
  const bare: Spec = { ociVersion: '1.0.2' };
  t.same(setProcessEnv(bare, ['A=1']), { ociVersion: '1.0.2', process: { env: ['A=1'] } });
  t.same(setAnnotation(bare, 'k', 'v'), { ociVersion: '1.0.2', annotations: { k: 'v' } });
  t.same(bare, { ociVersion: '1.0.2' });
  const env = ['A=1'];
  const out = setProcessEnv(spec, env);
  env.push('B=2');
  t.same((out.process as { env: string[] }).env, ['A=1'], 'the env list is copied');
});
