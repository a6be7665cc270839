// The worker's heartbeat: counts and durations batched per beat, state changes at once.
import t from 'tap';
import { linkToSupervisor } from '../../../src/nri/worker/supervisor-link.ts';
import type { WorkerMessage } from '../../../src/nri/worker-messages.ts';
import { sleep } from '../../helpers/wait.ts';

t.test('beats carry what happened since the last beat; state changes go at once', async (t) => {
  const sent: WorkerMessage[] = [];
  const link = linkToSupervisor((m) => sent.push(m), 50);
  t.same(sent, [{ t: 'beat' }], 'a beat at once');
  link.observer.request('adjusted', 0.001);
  link.observer.request('refused', 0.002, 'envhook: volume "v" not found');
  link.observer.request('empty', 0.0001);
  link.observer.registered({ runtimeName: 'containerd', runtimeVersion: '2.1.9', socket: '/s' });
  t.same(sent.at(-1), { t: 'registered', runtimeName: 'containerd', runtimeVersion: '2.1.9', socket: '/s' });
  await sleep(80);
  const beat = sent.find((m) => m.t === 'beat' && m.d);
  t.same(beat, {
    t: 'beat',
    d: { adjusted: 1, empty: 1, refused: 1, errors: 0, durations: [0.001, 0.002, 0.0001], lastError: 'envhook: volume "v" not found' },
  });
  link.stop();
  t.same(sent.at(-1), { t: 'beat' }, 'stop: a last beat, nothing pending');
});

t.test("the owner watcher's figures ride on a beat when they changed, not on every beat", async (t) => {
  const sent: WorkerMessage[] = [];
  const link = linkToSupervisor((m) => sent.push(m), 20);
  const o = { pods: 1, volumes: 1, watches: 1, polled: 0, ownedBeforeSwap: 0, ownedAfterSwap: 0, refusedByKernel: 0, refusedByBound: 0 };
  link.watchOwners(() => ({ ...o }));
  await sleep(70);
  const carried = () => sent.filter((m) => m.t === 'beat' && m.o !== undefined).map((m) => (m as { o: typeof o }).o);
  t.same(carried(), [o], 'once, though several beats went');
  t.ok(sent.filter((m) => m.t === 'beat').length >= 3, 'several beats went');
  o.ownedBeforeSwap = 4;
  o.ownedAfterSwap = 1;
  await sleep(50);
  t.same(
    carried().map((x) => [x.ownedBeforeSwap, x.ownedAfterSwap]),
    [
      [0, 0],
      [4, 1],
    ],
    'a change: sent again',
  );
  link.stop();
});
