import t from 'tap';
import { createLatency, LATENCY_BUCKETS } from '../../src/watch/latency.ts';

t.test('cumulative buckets, sum and count; above the last bound only in the count', async (t) => {
  const l = createLatency();
  t.same(l.snapshot(), { buckets: LATENCY_BUCKETS.map(() => 0), sum: 0, count: 0 });
  for (const s of [0.0005, 0.001, 0.003, 0.2, 9]) l.observe(s);
  const s = l.snapshot();
  t.same(s.buckets, [2, 2, 3, 3, 3, 3, 3, 4, 4, 4, 4, 4]);
  t.equal(s.count, 5);
  t.ok(Math.abs(s.sum - 9.2045) < 1e-9);
});
