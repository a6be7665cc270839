import t from 'tap';
import { execEnv } from '../../src/apply/exec-env.ts';
import { readAppliedEnv } from '../../src/plan/mark.ts';

const W = '/b/config.json';

t.test('the names mark: read, or refused with the annotation named and nothing of its text', async (t) => {
  t.equal(readAppliedEnv(undefined, W), undefined);
  t.equal(readAppliedEnv({ 'envhook.io/applied': 'sha256:0' }, W), undefined);
  t.same(readAppliedEnv({ 'envhook.io/applied-env': '{"set":["A","B_1"],"removed":["X_SERVICE_HOST"]}' }, W), {
    set: ['A', 'B_1'],
    removed: ['X_SERVICE_HOST'],
  });
  for (const bad of [
    'CANARY-mark',
    '{"set":["A"]}',
    '{"set":"A","removed":[]}',
    '{"set":[1],"removed":[]}',
    '{"set":["A=CANARY"],"removed":[]}',
    '{"set":[""],"removed":[]}',
    '[]',
    'null',
    7,
  ]) {
    t.throws(
      () => readAppliedEnv({ 'envhook.io/applied-env': bad }, W),
      { name: 'EnvhookError', message: '/b/config.json: annotation "envhook.io/applied-env" is not {"set":[names],"removed":[names]}' },
      JSON.stringify(bad),
    );
  }
});

t.test('set names take config.json values in place, removed names go, everything else stays', async (t) => {
  const spec = ['PATH=/bin', 'DB=db.internal', 'GREETING=hello world', 'EMPTY=', 'DB=later duplicate'];
  const mark = { set: ['DB', 'GREETING', 'EMPTY'], removed: ['REDIS_SERVICE_HOST', 'REDIS_PORT'] };
  t.same(
    execEnv(
      ['PATH=/usr/bin', 'REDIS_SERVICE_HOST=10.0.0.1', 'TERM=xterm', 'DB=stale', 'REDIS_PORT=tcp://x', 'OWN=1', 'DB=again', 'NOEQ'],
      mark,
      spec,
      W,
    ),
    ['PATH=/usr/bin', 'TERM=xterm', 'DB=db.internal', 'OWN=1', 'NOEQ', 'GREETING=hello world', 'EMPTY='],
    "the exec request's own entries (PATH, TERM, OWN, NOEQ) as given; DB in its place, its duplicate dropped; the rest appended in the mark's order",
  );
  t.same(execEnv([], { set: [], removed: ['X'] }, spec, W), []);
  t.same(execEnv(['A=1'], { set: [], removed: [] }, spec, W), ['A=1']);
  t.throws(() => execEnv([], { set: ['MISSING'], removed: [] }, spec, W), {
    message: '/b/config.json: variable "MISSING" of annotation "envhook.io/applied-env" is not in process.env',
  });
});
