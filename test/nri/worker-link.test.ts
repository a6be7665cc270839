// The worker's heartbeat: counts and durations batched per beat, state changes at once.
import t from 'tap';
import { linkToSupervisor, type WorkerMessage } from '../../src/nri/worker-link.ts';

t.test('beats carry what happened since the last beat; state changes go at once', async (t) => {
  const sent: WorkerMessage[] = [];
  const link = linkToSupervisor((m) => sent.push(m), 50);
  t.same(sent, [{ t: 'beat' }], 'a beat at once');
  link.observer.request('adjusted', 0.001);
  link.observer.request('refused', 0.002, 'envhook: volume "v" not found');
  link.observer.request('empty', 0.0001);
  link.observer.registered({ runtimeName: 'containerd', runtimeVersion: '2.1.9', socket: '/s' });
  t.same(sent.at(-1), { t: 'registered', runtimeName: 'containerd', runtimeVersion: '2.1.9', socket: '/s' });
  await new Promise((r) => setTimeout(r, 80));
  const beat = sent.find((m) => m.t === 'beat' && m.d);
  t.same(beat, {
    t: 'beat',
    d: { adjusted: 1, empty: 1, refused: 1, errors: 0, durations: [0.001, 0.002, 0.0001], lastError: 'envhook: volume "v" not found' },
  });
  link.stop();
  t.same(sent.at(-1), { t: 'beat' }, 'stop: a last beat, nothing pending');
});
