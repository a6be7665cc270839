// One watched volume, driven by hand: the test plays inotify (it delivers each event) and the
// scheduler (it runs the marked pass), so each assertion says what one event or one pass did,
// on real files with real chown. The registry and real inotify: registry.test.ts.
import t, { type Test } from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { VolumeWatch } from '../../src/watch/volume.ts';
import type { Inotify, WatchListener } from '../../src/watch/inotify.ts';
import type { Scheduler, Task } from '../../src/watch/scheduler.ts';
import { createLogger } from '../../src/log.ts';
import { normalize } from '../../src/ownership/annotation.ts';
import { ownersOf } from '../../src/ownership/owners.ts';
import { atomicWrite, atomicWriteSteps } from '../../scripts/kubelet-pod.ts';

/** Inotify by hand: the listeners by directory; `refuse` makes every watch fail at our bound. */
function handInotify(refuse = false) {
  const listeners = new Map<string, WatchListener>();
  const inotify: Inotify = {
    watch(dir, listener) {
      if (refuse) return 'limit';
      listeners.set(dir, listener);
      return { close: () => void listeners.delete(dir) };
    },
    open: 0,
    refusedByKernel: 0,
    refusedByBound: 0,
  };
  return { inotify, listeners, event: (dir: string, name: string | null) => listeners.get(dir)?.('rename', name) };
}

/** A scheduler by hand: marked tasks wait until the test runs them. */
function handScheduler() {
  const queue = new Set<Task>();
  const scheduler: Scheduler = {
    mark: (task) => void queue.add(task),
    cancel: (task) => void queue.delete(task),
    get pending() {
      return queue.size;
    },
    close: () => queue.clear(),
  };
  const runAll = () => {
    const tasks = [...queue];
    queue.clear();
    for (const task of tasks) task.run();
  };
  return { scheduler, queue, runAll };
}

const OWNERS = { volume: 'keys', defaultUser: 1000, items: [{ path: 'pub', user: 0 }] };

function setup(t: Test, o: { preSwap?: boolean; refuse?: boolean } = {}) {
  const dir = t.testdir();
  const vol = path.join(dir, 'keys');
  atomicWrite(vol, { key: { data: 'K', mode: 0o400 }, pub: 'P', 'sub/nested': 'N' });
  const logFile = path.join(dir, 'watch.log');
  const ino = handInotify(o.refuse);
  const sch = handScheduler();
  const gone: VolumeWatch[] = [];
  const owned: ['before' | 'after', number][] = [];
  const target = { volume: 'keys', dir: vol, ...ownersOf(normalize([OWNERS])[0]!, { kind: 'none' }) };
  const env = {
    log: createLogger(logFile, 'debug'),
    scheduler: sch.scheduler,
    inotify: ino.inotify,
    maxPending: 4,
    preSwap: o.preSwap ?? true,
    onGone: (v: VolumeWatch) => void gone.push(v),
    owned: (when: 'before' | 'after', files: number) => void owned.push([when, files]),
  };
  const v = new VolumeWatch('pod-1', target, env);
  t.teardown(() => v.close());
  const uid = (rel: string, base = path.join(vol, '..data')) => fs.lstatSync(path.join(base, rel)).uid;
  const log = () => (fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8') : '');
  return { vol, v, ino, sch, gone, owned, uid, log };
}

t.test('start: one watch on the volume and a pass queued, which owns what ..data points at', async (t) => {
  const s = setup(t);
  s.v.start();
  t.equal(s.v.watches, 1);
  t.equal(s.v.degraded, false);
  t.equal(s.uid('key'), 0, 'nothing owned before the pass runs');
  t.same([...s.sch.queue], [s.v]);
  s.sch.runAll();
  t.same([s.uid('key'), s.uid('pub'), s.uid('sub/nested')], [1000, 0, 1000]);
  t.same(s.owned, [['after', 2]], '..data pointed at them already: counted as owned after the swap');
});

t.test("a rewrite: the new directory owned at its own event, before the kubelet's swap", async (t) => {
  const s = setup(t);
  s.v.start();
  s.sch.runAll();
  const steps = atomicWriteSteps(s.vol, { key: { data: 'K2', mode: 0o400 }, pub: 'P2', 'sub/nested': 'N2' });
  const { tsDir } = steps.next().value as { tsDir: string };
  s.ino.event(s.vol, path.basename(tsDir));
  t.same([s.uid('key', tsDir), s.uid('pub', tsDir), s.uid('sub/nested', tsDir)], [1000, 0, 1000], 'owned in the event callback');
  t.same(s.owned.slice(1), [['before', 2]], 'counted as owned before the swap');
  t.equal(s.v.watches, 1 + 2, 'the new directory and its subdirectory watched while the kubelet writes');
  steps.next(); // ..data swapped
  s.ino.event(s.vol, '..data');
  t.equal(s.v.watches, 1, 'published: its watches end');
  for (let r = steps.next(); !r.done; r = steps.next());
  t.equal(s.uid('key'), 1000);
});

t.test('without preSwap: nothing at the new directory, everything at the ..data event', async (t) => {
  const s = setup(t, { preSwap: false });
  s.v.start();
  s.sch.runAll();
  const steps = atomicWriteSteps(s.vol, { key: 'K2', pub: 'P2' });
  const { tsDir } = steps.next().value as { tsDir: string };
  s.ino.event(s.vol, path.basename(tsDir));
  t.equal(s.uid('key', tsDir), 0, 'not owned before the swap');
  steps.next();
  s.ino.event(s.vol, '..data');
  t.equal(s.uid('key', tsDir), 1000, 'owned at the swap, without waiting for the scheduler');
  t.equal(s.sch.queue.size, 0);
});

t.test('an event without a name (the kernel queue overflowed) queues a full pass', async (t) => {
  const s = setup(t);
  s.v.start();
  s.sch.runAll();
  fs.lchownSync(path.join(s.vol, '..data/key'), 0, 0);
  s.ino.event(s.vol, null);
  t.equal(s.uid('key'), 0, 'queued, not run in the callback');
  s.sch.runAll();
  t.equal(s.uid('key'), 1000);
});

t.test('no watch possible: polled; a poll finds the new directories by scanning', async (t) => {
  const s = setup(t, { refuse: true });
  s.v.start();
  t.equal(s.v.degraded, true);
  t.equal(s.v.watches, 0);
  s.sch.runAll();
  t.equal(s.uid('key'), 1000, 'the first pass runs all the same');
  const steps = atomicWriteSteps(s.vol, { key: 'K2', pub: 'P2' });
  const { tsDir } = steps.next().value as { tsDir: string };
  s.v.poll();
  s.sch.runAll();
  t.equal(s.uid('key', tsDir), 1000, 'the unpublished directory owned by the poll');
});

t.test('the volume directory gone: the next pass closes the watch and reports it once', async (t) => {
  const s = setup(t);
  s.v.start();
  s.sch.runAll();
  fs.rmSync(s.vol, { recursive: true });
  s.v.poll();
  s.sch.runAll();
  t.same(s.gone, [s.v]);
  t.equal(s.v.watches, 0);
  s.v.poll();
  s.sch.runAll();
  t.equal(s.gone.length, 1, 'closed: nothing more');
});

t.test('a failing volume: each distinct failure logged once, the watch goes on', async (t) => {
  const s = setup(t);
  s.v.start();
  s.sch.runAll();
  fs.rmSync(path.join(s.vol, '..data'));
  fs.symlinkSync('/etc', path.join(s.vol, '..data'));
  for (let i = 0; i < 3; i++) {
    s.v.poll();
    s.sch.runAll();
  }
  const warnings = s
    .log()
    .split('\n')
    .filter((l) => l.includes('"level":40'));
  t.equal(warnings.length, 1, warnings.join('\n'));
  t.match(warnings[0], /watched volume owners: /);
  t.equal(s.v.watches, 1, 'still watched');
});
