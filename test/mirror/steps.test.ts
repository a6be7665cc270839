// Resumable work (src/mirror/steps.ts): drained in one go, or run in slices with the loop turning
// between them (a timer runs before the end); a stop thrown into the work at the step it reached,
// its own clean-up run; the working directory home whenever the loop turns.
import t from 'tap';
import fs from 'node:fs';
import { fdPath, withCwdAtSteps } from '../../src/fs/confined.ts';
import { drain, runInSlices, SLICE_MS, type Steps } from '../../src/mirror/steps.ts';

/** Busy for `ms` of the loop's time, as a step that reads and writes files would be. */
const busy = (ms: number) => {
  const end = performance.now() + ms;
  while (performance.now() < end);
};

function* work(n: number, ms: number, done: number[], cleaned: string[]): Steps<string> {
  try {
    for (let i = 0; i < n; i++) {
      busy(ms);
      done.push(i);
      yield;
    }
    return `${n} steps`;
  } catch (err) {
    cleaned.push((err as Error).message);
    yield; // a clean-up may take steps of its own
    throw err;
  }
}

t.test('drain: every step in one go, the result returned; an error thrown by a step thrown', async (t) => {
  const done: number[] = [];
  t.equal(drain(work(5, 0, done, [])), '5 steps');
  t.same(done, [0, 1, 2, 3, 4]);
  // eslint-disable-next-line require-yield
  const failing = function* (): Steps<void> {
    throw new Error('refused');
  };
  t.throws(() => drain(failing()), { message: 'refused' });
});

t.test('runInSlices: the loop turns between slices of about SLICE_MS; each step once, in order', async (t) => {
  const done: number[] = [];
  let ticks = 0;
  const timer = setInterval(() => void ticks++, 1);
  const result = await runInSlices(work(60, 2, done, []));
  clearInterval(timer);
  t.equal(result, '60 steps');
  t.same(
    done,
    Array.from({ length: 60 }, (_, i) => i),
  );
  // 120 ms of work in slices of SLICE_MS: the timer got in between several times.
  t.ok(ticks >= 120 / SLICE_MS / 2, `${ticks} timer turns during 120 ms of work`);
});

t.test('runInSlices: a stop thrown into the work where it was, its clean-up done, the promise rejected', async (t) => {
  const done: number[] = [];
  const cleaned: string[] = [];
  let turns = 0;
  const stop = () => (++turns === 2 ? new Error('closing') : undefined);
  await t.rejects(runInSlices(work(1000, 1, done, cleaned), stop), { message: 'closing' });
  t.same(cleaned, ['closing'], 'the work saw the stop, once');
  t.ok(done.length > 0 && done.length < 1000, `stopped after ${done.length} of 1000 steps`);
});

t.test('runInSlices: a walk in a directory (withCwdAtSteps) is out of it whenever the loop turns', async (t) => {
  const dir = t.testdir({ a: '1', b: '2' });
  const home = process.cwd();
  const fd = fs.openSync(dir, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY);
  t.teardown(() => fs.closeSync(fd));
  const seen: string[] = [];
  const elsewhere: string[] = [];
  const timer = setInterval(() => elsewhere.push(process.cwd()), 1);
  const walk = withCwdAtSteps(function* (enter) {
    enter(fd);
    for (let i = 0; i < 40; i++) {
      busy(1);
      // The bare name in the walk's directory, after every turn of the loop too.
      seen.push(`${fdPath(fd, 'a')}=${fs.readFileSync(fdPath(fd, 'a'), 'utf8')}`);
      yield;
    }
    return process.cwd();
  });
  const inside = await runInSlices(walk);
  clearInterval(timer);
  t.equal(fs.realpathSync(inside), fs.realpathSync(dir), 'the walk ran in its directory');
  t.same(new Set(seen), new Set(['a=1']), 'by the bare name at every step');
  t.ok(elsewhere.length > 0, 'the loop turned during the walk');
  t.same(new Set(elsewhere), new Set([home]), 'and was home each time');
  t.equal(process.cwd(), home, 'home at the end');
});
