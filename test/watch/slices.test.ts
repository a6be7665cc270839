// Pod-proportional work in slices (src/watch/slices.ts): the loop turns between slices, so a timer
// (the heartbeat) and I/O run while a long list is worked through; a cancelled run stops early.
import t from 'tap';
import { inSlices, SLICE_MS } from '../../src/watch/slices.ts';

/** Busy for `ms` of the loop's time, as a step that reads and checks files would be. */
const busy = (ms: number) => {
  const end = performance.now() + ms;
  while (performance.now() < end);
};

t.test('every item done, in order; the loop turns between slices: a timer runs before the end', async (t) => {
  const done: number[] = [];
  let ticks = 0;
  const timer = setInterval(() => void ticks++, 5);
  const all = await inSlices(
    Array.from({ length: 60 }, (_, i) => i),
    (i) => {
      busy(2);
      done.push(i);
    },
  );
  clearInterval(timer);
  t.equal(all, true);
  t.same(
    done,
    Array.from({ length: 60 }, (_, i) => i),
    'each item once, in order',
  );
  // 120 ms of work in slices of SLICE_MS: the 5 ms timer got in between many times.
  t.ok(ticks >= 120 / SLICE_MS / 2, `the timer ran between slices (${ticks} times)`);
});

t.test('I/O and immediates queued before the run get their turn before its end, not after the whole list', async (t) => {
  const done: number[] = [];
  let seenAt: number | undefined;
  setImmediate(() => (seenAt = done.length));
  await inSlices(
    Array.from({ length: 100 }, (_, i) => i),
    (i) => {
      busy(1);
      done.push(i);
    },
  );
  // 100 ms of work: without slices the immediate would run after all 100 items.
  t.ok(seenAt !== undefined && seenAt < 100, `the immediate ran after ${seenAt} of 100 items`);
});

t.test('cancelled: stops before the next item and says so', async (t) => {
  const done: number[] = [];
  let stop = false;
  setTimeout(() => (stop = true), 15);
  const all = await inSlices(
    Array.from({ length: 1000 }, (_, i) => i),
    (i) => {
      busy(1);
      done.push(i);
    },
    () => stop,
  );
  t.equal(all, false, 'not every item');
  t.ok(done.length > 0 && done.length < 1000, `stopped after ${done.length} items`);
  t.same(
    done,
    Array.from({ length: done.length }, (_, i) => i),
    'the ones done, in order',
  );
});
