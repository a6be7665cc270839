// The scheduler coalesces marks and runs one task per event-loop turn.
import t from 'tap';
import { createScheduler, type Task } from '../../src/watch/scheduler.ts';
import { sleep } from '../helpers/wait.ts';

const counter = (log: string[], name: string): Task => ({ run: () => void log.push(name) });

t.test('a task marked many times before its turn runs once', async (t) => {
  const s = createScheduler();
  const log: string[] = [];
  const a = counter(log, 'a');
  for (let i = 0; i < 100; i++) s.mark(a);
  t.equal(s.pending, 1);
  await new Promise((r) => setImmediate(r));
  await new Promise((r) => setImmediate(r));
  t.same(log, ['a']);
  s.close();
});

t.test('one task a turn: other work runs between two passes', async (t) => {
  const s = createScheduler();
  const log: string[] = [];
  s.mark(counter(log, 'a'));
  s.mark(counter(log, 'b'));
  s.mark(counter(log, 'c'));
  setImmediate(() => log.push('other'));
  await sleep(20);
  t.same(log, ['a', 'other', 'b', 'c']);
  s.close();
});

t.test('a task marked while it runs runs again; cancel and close drop queued tasks', async (t) => {
  const s = createScheduler();
  const log: string[] = [];
  let again = true;
  const a: Task = {
    run() {
      log.push('a');
      if (again) s.mark(a);
      again = false;
    },
  };
  const b = counter(log, 'b');
  s.mark(a);
  s.mark(b);
  s.cancel(b);
  await sleep(20);
  t.same(log, ['a', 'a']);
  s.mark(b);
  s.close();
  s.mark(b);
  await sleep(20);
  t.same(log, ['a', 'a'], 'nothing runs after close');
  t.equal(s.pending, 0);
});
