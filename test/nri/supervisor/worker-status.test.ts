// The status the supervisor keeps from its workers' messages: counts, the connection and its
// "since", missed containers reported once, and what it publishes.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { createLogger, silentLogger } from '../../../src/log.ts';
import { WorkerStatus } from '../../../src/nri/supervisor/worker-status.ts';
import type { NriStatus } from '../../../src/nri/status-file.ts';
import type { MissedContainer } from '../../../src/nri/worker-messages.ts';
import { procStat } from '../../../src/nri/proc-stat.ts';

const missed = (id: string): MissedContainer => ({ id, name: 'app', pod: 'p', namespace: 'ns', podUid: 'u', podEvicts: false });

t.test('beats add to the counts; registered and disconnected change the connection at once', async (t) => {
  const published: NriStatus[] = [];
  const durations: number[] = [];
  const s = new WorkerStatus({
    plugin: '50-envhook',
    runsAs: 'external',
    log: silentLogger,
    publish: (st) => published.push(st),
    onDurations: (d) => durations.push(...d),
  });
  s.workerStarted(42);
  let registered = 0;
  s.receive({ t: 'registered', runtimeName: 'containerd', runtimeVersion: '2.1.9', socket: '/s' }, () => registered++);
  s.receive(
    { t: 'beat', d: { adjusted: 2, empty: 1, refused: 1, errors: 0, durations: [0.1, 0.2], lastError: 'envhook: no volume' } },
    () => {},
  );
  t.equal(registered, 1);
  t.match(s.snapshot(), {
    plugin: '50-envhook',
    runsAs: 'external',
    workerPid: 42,
    connected: true,
    socket: '/s',
    runtime: { name: 'containerd', version: '2.1.9' },
    counts: { registrations: 1, adjusted: 2, empty: 1, refused: 1, errors: 0 },
    lastError: { message: 'envhook: no volume' },
  });
  t.same(durations, [0.1, 0.2], 'the durations go to the histogram');
  await new Promise((r) => setTimeout(r, 20));
  t.ok(published.at(-1)?.connected, 'the connection published in the next turn');
  s.workerExited();
  t.match(s.snapshot(), { connected: false, workerPid: undefined });
  s.publishNow();
  t.equal(published.at(-1)?.connected, false, 'published at once');
});

t.test('a missed container is logged and counted once, with names only', async (t) => {
  const file = path.join(t.testdir(), 'log');
  const seen: string[][] = [];
  const s = new WorkerStatus({ plugin: '50-envhook', log: createLogger(file, 'info'), onMissed: (c) => seen.push(c.map((x) => x.id)) });
  s.receive({ t: 'missed', containers: [missed('a'), missed('b')], whole: true }, () => {});
  s.receive({ t: 'missed', containers: [missed('b'), missed('c')], whole: true }, () => {});
  t.equal(s.snapshot().counts.missed, 3);
  t.same(seen, [['a', 'b'], ['c']]);
  const lines = fs.readFileSync(file, 'utf8').trim().split('\n');
  t.equal(lines.filter((l) => l.includes('created while the plugin was not registered')).length, 3);
});

t.test('a publish that fails is a warning, not the end of the supervisor', async (t) => {
  const file = path.join(t.testdir(), 'log');
  const s = new WorkerStatus({
    plugin: '50-envhook',
    log: createLogger(file, 'info'),
    publish: () => {
      throw new Error('EROFS');
    },
  });
  s.publishNow();
  t.match(fs.readFileSync(file, 'utf8'), /"msg":"nri: status not written"/);
});

t.test(
  'the containers running without their env: a Synchronize lists them all, a PostCreateContainer adds, an eviction or an ended process drops',
  async (t) => {
    const published: NriStatus[] = [];
    const s = new WorkerStatus({ plugin: '50-envhook', log: silentLogger, publish: (st) => published.push(st) });
    const ids = () => (s.snapshot().unapplied ?? []).map((u) => u.id);
    t.equal(s.snapshot().unapplied, undefined, 'no list before the first Synchronize');
    // this test's own process stands for a container's: it runs, with its start time recorded
    s.receive({ t: 'missed', containers: [{ ...missed('a'), pid: process.pid }, missed('b')], whole: true }, () => {});
    t.same(s.snapshot().unapplied![0], {
      id: 'a',
      container: 'app',
      pod: 'p',
      namespace: 'ns',
      pid: process.pid,
      pidStartTicks: procStat(process.pid)!.startTicks,
    });
    s.receive({ t: 'missed', containers: [missed('c')], whole: false }, () => {});
    t.same(ids(), ['a', 'b', 'c'], 'a PostCreateContainer adds');
    s.receive({ t: 'evicted', ids: ['b'], failed: ['c'] }, () => {});
    t.same(ids(), ['a', 'c'], 'evicted: dropped; a failed eviction: still running without its env');
    t.equal(s.snapshot().unapplied![1]!.evictionFailed, true, 'marked');
    s.receive({ t: 'missed', containers: [{ ...missed('a'), pid: process.pid }], whole: true }, () => {});
    t.same(ids(), ['a'], 'the next Synchronize does not list c: it ended');
    s.receive({ t: 'missed', containers: [{ ...missed('d'), pid: 4194304 }], whole: false }, () => {});
    t.same(ids(), ['a'], 'a process that is not there: ended, dropped');
    s.receive({ t: 'missed', containers: [], whole: true }, () => {});
    t.same(ids(), [], 'a Synchronize with none: none');
    s.publishNow();
    t.same(published.at(-1)?.unapplied, [], 'published');
    t.equal(s.snapshot().counts.missed, 4, 'each counted once as missed');
  },
);
