import t from 'tap';
import { runPipeline, type Stage } from '../src/pipeline.ts';
import { silentLogger } from '../src/log.ts';
import { APPLIED_KEY, appliedDigest, envRequested } from '../src/plan/mark.ts';
import type { Spec } from '../src/oci/spec.ts';

const settings = { kubeletRoot: '/nonexistent', runtime: 'runc', logFile: undefined, logLevel: 'info' as const };
const run = (spec: Spec, stage: Stage = 'inject') => runPipeline(spec, { settings, stage, log: silentLogger });
const spec = (annotations: Record<string, string>): Spec => ({ process: { env: ['PATH=/bin', 'X_SERVICE_HOST=1'] }, annotations: { 'io.kubernetes.cri.container-name': 'app', ...annotations } });

t.test('env and envhook.io/applied only when an env annotation has an entry for this container', async (t) => {
  const none = spec({});
  t.equal(run(none).spec, none, 'no annotation: the same spec object');
  const other = spec({ 'envhook.io/env': '{"other":[{"name":"A","value":"1"}]}', 'envhook.io/serviceLinks': '{"other":false}' });
  t.equal(run(other).spec, other, 'entries for other containers only');
  t.notOk(envRequested({ annotations: other.annotations as Record<string, string>, container: 'app' }));
  const mine = spec({ 'envhook.io/env': '{"app":[{"name":"A","value":"$(PATH):x"}]}', 'envhook.io/serviceLinks': '{"*":false}' });
  for (const stage of ['inject', 'create', 'precreate'] as const) {
    const out = run(mine, stage);
    t.same((out.spec.process as { env: string[] }).env, ['PATH=/bin', 'A=/bin:x'], stage);
    t.equal((out.spec.annotations as Record<string, string>)[APPLIED_KEY], appliedDigest({ annotations: mine.annotations as Record<string, string>, container: 'app' }));
    t.same(out.plan.env, [{ name: 'A', source: 'value' }]);
    t.same(out.plan.removed, ['X_SERVICE_HOST']);
    t.equal((out.spec.annotations as Record<string, string>)['envhook.io/applied-env'], '{"set":["A"],"removed":["X_SERVICE_HOST"]}', `${stage}: the names mark, names only`);
  }
  t.same((mine.process as { env: string[] }).env, ['PATH=/bin', 'X_SERVICE_HOST=1'], 'the input spec is not changed');
  // The hook stage does no env work: it only checks the shim or precreate stage left its mark.
  const marked = { ...mine, annotations: { ...(mine.annotations as Record<string, string>), [APPLIED_KEY]: appliedDigest({ annotations: mine.annotations as Record<string, string>, container: 'app' }) } };
  t.equal(run(marked, 'hook').spec, marked, 'the hook stage does no env work');
  const full = run(mine, 'create').spec;
  t.equal(run(full, 'hook').spec, full, 'the names mark beside it does not disturb the hook stage\'s check');
  t.throws(() => run(mine, 'hook'), { message: /^env requested by annotations "envhook\.io\/env", "envhook\.io\/serviceLinks" was not applied before the runtime's create/ }, 'and refuses env that was not applied');
  t.ok(envRequested({ annotations: mine.annotations as Record<string, string>, container: 'app' }));
  t.notSame(appliedDigest({ annotations: mine.annotations as Record<string, string>, container: 'app' }), appliedDigest({ annotations: mine.annotations as Record<string, string>, container: 'b' }));
});
