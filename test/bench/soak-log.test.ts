// What the soak takes from envhook's stderr (bench/soak-log.ts): missed and evicted containers by
// id, also when the report comes before the soak knows the id, error lines, and canary values.
import t from 'tap';
import { envhookLog, type AppMarks } from '../../bench/soak-log.ts';

const line = (o: Record<string, unknown>) => JSON.stringify({ level: 30, time: 1, ...o });

t.test('missed and evicted containers are marked on their record by id', async (t) => {
  const log = envhookLog('CANARY-x');
  const a: AppMarks = { id: 'aaa' };
  log.adopt(a);
  log.onLine(line({ level: 40, msg: 'nri: container runs without envhook: created while the plugin was not registered', id: 'aaa' }));
  t.same(a, { id: 'aaa', reported: true });
  log.onLine(line({ msg: 'nri: evicted: stopped over CRI so that the kubelet creates it again with its env', id: 'aaa' }));
  t.same(a, { id: 'aaa', reported: true, evicted: true });
  t.equal(log.missedLines, 1);
  t.equal(log.evictedLines, 1);
});

t.test('a report before the soak has the id applies when it adopts the container', async (t) => {
  const log = envhookLog('CANARY-x');
  log.onLine(line({ level: 40, msg: 'nri: container runs without envhook: created while the plugin was not registered', id: 'bbb' }));
  const b: AppMarks = { id: 'bbb' };
  log.adopt(b);
  t.same(b, { id: 'bbb', reported: true });
  t.equal(log.early.size, 0, 'nothing kept once adopted');
});

t.test('errors, eviction failures, lines that are not JSON, and canaries are counted; no line is kept', async (t) => {
  const log = envhookLog('CANARY-x');
  log.onLine(line({ level: 50, msg: 'nri: worker exited' }));
  log.onLine(line({ level: 40, msg: 'nri: eviction failed', id: 'ccc' }));
  log.onLine('not json at all');
  log.onLine(line({ msg: 'oops', value: 'CANARY-x-1' }));
  log.onLine('');
  t.equal(log.lines, 4);
  t.equal(log.errors, 1);
  t.same(log.lastErrors, ['nri: worker exited']);
  t.equal(log.evictFailedLines, 1);
  t.equal(log.notJson, 1);
  t.equal(log.canaryLines, 1);
  t.notMatch(JSON.stringify([...log.last, ...log.lastErrors]), 'CANARY', 'only messages are kept, never a field');
});
