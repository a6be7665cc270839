// The observer a worker reports to when nothing keeps its status: every event taken, none kept.
import t from 'tap';
import { silentObserver, type NriObserver } from '../../../src/nri/worker/observer.ts';

t.test('silentObserver takes every event of NriObserver and does nothing with it', async (t) => {
  const events: (keyof NriObserver)[] = ['registered', 'disconnected', 'request', 'missed', 'evicted'];
  t.same(Object.keys(silentObserver).sort(), [...events].sort(), 'one handler an event, no other');
  const o: NriObserver = silentObserver;
  t.equal(o.registered({ runtimeName: 'containerd', runtimeVersion: '2.1.9', socket: '/run/nri.sock' }), undefined);
  t.equal(o.disconnected('runtime gone'), undefined);
  t.equal(o.request('refused', 0.01, 'envhook: no'), undefined);
  t.equal(o.missed([], true), undefined);
  t.equal(o.evicted(['a'], ['b']), undefined);
});
