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

t.test('mounts of copied volumes: the source is the owned copy, every other field kept; the input unchanged', async (t) => {
  const keys = {
    destination: '/keys',
    source: '/k/pods/u/volumes/kubernetes.io~secret/keys',
    type: 'bind',
    options: ['rbind', 'ro'],
    uidMappings: [],
  };
  const hosts = { destination: '/etc/hosts', source: '/k/pods/u/etc-hosts', type: 'bind', options: ['rbind', 'ro'] };
  const withMounts: Spec = { ...spec, mounts: [hosts, keys] };
  const copied = {
    copy: { mounts: [{ destination: '/keys', source: '/run/envhook/volumes/u/keys', type: 'bind', options: [], original: keys }] },
  };
  const c = { ...changes(undefined), owners: [copied] } as unknown as Changes;
  const out = applyToSpec(withMounts, c);
  t.same(out.mounts, [hosts, { ...keys, source: '/run/envhook/volumes/u/keys' }]);
  t.equal((out.mounts as unknown[])[0], hosts, 'another mount: the same object');
  t.equal(keys.source, '/k/pods/u/volumes/kubernetes.io~secret/keys', 'the input mount unchanged');
  t.same(out.annotations, spec.annotations, 'no env: no mark');
});
