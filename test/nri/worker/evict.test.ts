// The evictor: which missed containers it stops (pods that ask, or all with the setting), over
// a real gRPC server reading cri-api's StopContainerRequest (test/helpers/cri/server.ts);
// off the caller's turn, one at a time, at most N a Synchronize, each once while it is pending;
// a socket that cannot be used is one line and every container counted failed; one line per
// eviction with names and ids, never a value.
import t, { type Test } from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { createLogger } from '../../../src/log.ts';
import { createEvictor, type EvictorOptions } from '../../../src/nri/worker/evict.ts';
import type { MissedContainer } from '../../../src/nri/worker-messages.ts';
import { missingForCriProto } from '../../helpers/cri/proto.ts';
import { startCriServer } from '../../helpers/cri/server.ts';
import { sleep } from '../../helpers/wait.ts';

const skip = missingForCriProto();

const missed = (id: string, podEvicts = false): MissedContainer => ({
  id,
  name: 'app',
  pod: `pod-${id}`,
  namespace: 'ns',
  podUid: `uid-${id}`,
  podEvicts,
});

function setup(t: Test, opts: Partial<EvictorOptions>) {
  const file = path.join(t.testdir(), 'log');
  const reports: { ids: string[]; failed: string[] }[] = [];
  const evictor = createEvictor({
    log: createLogger(file, 'debug'),
    observer: { evicted: (ids, failed) => reports.push({ ids: [...ids], failed: [...failed] }) },
    all: false,
    ...opts,
  });
  t.teardown(() => evictor.close());
  const lines = () =>
    fs.existsSync(file)
      ? fs
          .readFileSync(file, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as Record<string, unknown>)
      : [];
  const total = () => ({ ids: reports.flatMap((r) => r.ids), failed: reports.flatMap((r) => r.failed) });
  return { evictor, lines, total };
}

t.test('pods that ask; all with the setting; after the caller returns, one at a time', { skip }, async (t) => {
  const server = await startCriServer();
  t.teardown(() => server.close());
  const { evictor, lines, total } = setup(t, { criSocket: server.socket });
  evictor.missed([missed('a'), missed('b', true), missed('c', true)]);
  t.equal(server.stops.length, 0, 'nothing asked while the caller (the Synchronize handler) runs');
  await evictor.idle();
  t.same(
    server.stops.map((r) => [r.containerId, r.timeout]),
    [
      ['b', 0n],
      ['c', 0n],
    ],
    'only the pods that ask; a timeout of 0 (killed at once)',
  );
  t.same(total(), { ids: ['b', 'c'], failed: [] });
  const evicted = lines().filter((l) => String(l.msg).startsWith('nri: evicted'));
  t.same(
    evicted.map((l) => [l.container, l.id, l.pod, l.namespace, l.podUid, l.socket, l.level]),
    [
      ['app', 'b', 'pod-b', 'ns', 'uid-b', server.socket, 30],
      ['app', 'c', 'pod-c', 'ns', 'uid-c', server.socket, 30],
    ],
  );

  const all = setup(t, { criSocket: server.socket, all: true });
  all.evictor.missed([missed('d'), missed('e', true)]);
  await all.evictor.idle();
  t.same(
    server.stops.slice(2).map((r) => r.containerId),
    ['d', 'e'],
    'the setting: every missed container',
  );
});

t.test('at most N a Synchronize, the rest named in one line; a pending one is not queued twice', { skip }, async (t) => {
  const server = await startCriServer({ delayMs: 50 });
  t.teardown(() => server.close());
  const { evictor, lines, total } = setup(t, { criSocket: server.socket, all: true, maxPerSync: 2 });
  evictor.missed([missed('a'), missed('b'), missed('c'), missed('d')]);
  // A second registration's Synchronize while those are pending: a and b are not asked twice.
  evictor.missed([missed('a'), missed('b'), missed('e')]);
  await evictor.idle();
  t.same(
    server.stops.map((r) => r.containerId),
    ['a', 'b', 'e'],
  );
  t.equal(server.maxInFlight(), 1, 'one at a time');
  t.same(total(), { ids: ['a', 'b', 'e'], failed: [] });
  const skipped = lines().filter((l) => String(l.msg).startsWith('nri: not evicted'));
  t.same(
    skipped.map((l) => [l.count, l.ids, l.max, l.level]),
    [[2, ['c', 'd'], 2, 40]],
  );
  t.equal(skipped[0]!.msg, 'nri: not evicted: at most 2 evictions a Synchronize; left running without their env');
});

t.test("the runtime's error for one container: that one failed, the others go on", { skip }, async (t) => {
  const server = await startCriServer({ known: (id) => id !== 'gone' });
  t.teardown(() => server.close());
  const { evictor, lines, total } = setup(t, { criSocket: server.socket, all: true });
  evictor.missed([missed('gone'), missed('b')]);
  await evictor.idle();
  t.same(total(), { ids: ['b'], failed: ['gone'] });
  const failed = lines().filter((l) => l.msg === 'nri: eviction failed');
  t.same(
    failed.map((l) => [l.id, l.pod, l.reason, l.level]),
    [['gone', 'pod-gone', 'the runtime answered NOT_FOUND (gRPC status 5)', 40]],
  );
  t.notMatch(JSON.stringify(lines()), 'try to find container', "never the runtime's own message");
});

t.test('a CRI socket that cannot be used: one line, every container failed, nothing thrown', async (t) => {
  const dir = fs.mkdtempSync('/tmp/envhook-evict-');
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const absent = path.join(dir, 'absent.sock');
  const { evictor, lines, total } = setup(t, { criSocket: absent, all: true });
  evictor.missed([missed('a'), missed('b'), missed('c')]);
  await evictor.idle();
  t.same(total(), { ids: [], failed: ['a', 'b', 'c'] });
  const warn = lines().filter((l) => l.level === 40);
  t.same(
    warn.map((l) => [l.msg, l.socket, l.reason, l.count, l.ids]),
    [
      [
        'nri: eviction failed: the CRI socket cannot be used',
        absent,
        `CRI socket ${absent}: no such file or directory (ENOENT)`,
        3,
        ['a', 'b', 'c'],
      ],
    ],
  );
  // The next Synchronize tries again (they were not left pending).
  evictor.missed([missed('a')]);
  await evictor.idle();
  t.same(total().failed, ['a', 'b', 'c', 'a']);

  // No socket set and none of the runtimes' own exists.
  const none = setup(t, { all: true, exists: () => false });
  none.evictor.registered('containerd');
  none.evictor.missed([missed('x')]);
  await none.evictor.idle();
  t.same(none.total(), { ids: [], failed: ['x'] });
  t.same(
    none.lines().map((l) => [l.msg, l.looked]),
    [['nri: eviction failed: no CRI socket found (set criSocket)', ['/run/containerd/containerd.sock', '/var/run/crio/crio.sock']]],
  );
});

t.test('close: the queue is dropped', { skip }, async (t) => {
  const server = await startCriServer({ delayMs: 100 });
  t.teardown(() => server.close());
  const { evictor } = setup(t, { criSocket: server.socket, all: true });
  evictor.missed([missed('a'), missed('b'), missed('c')]);
  await sleep(30);
  evictor.close();
  await evictor.idle();
  t.ok(server.stops.length <= 1, `${server.stops.length} asked before the close, none after`);
  evictor.missed([missed('d')]);
  await evictor.idle();
  t.notOk(
    server.stops.some((r) => r.containerId === 'd'),
    'nothing after close',
  );
});

t.test("a CRI socket another runtime serves (its Version's runtime_name): refused, one line, nothing stopped", { skip }, async (t) => {
  const server = await startCriServer({ runtimeName: 'cri-o' });
  t.teardown(() => server.close());
  const { evictor, lines, total } = setup(t, { criSocket: server.socket, all: true });
  evictor.registered('containerd');
  evictor.missed([missed('a'), missed('b')]);
  await evictor.idle();
  t.same(server.stops, [], 'no StopContainer through it');
  t.same(total(), { ids: [], failed: ['a', 'b'] });
  const line = lines().find((l) => String(l.msg).includes("another runtime's"))!;
  t.match(line, { level: 40, socket: server.socket, runtime: 'cri-o', registered: 'containerd', count: 2 });
  t.equal(line.msg, "nri: eviction failed: the CRI socket is another runtime's (set criSocket to the registered runtime's)");

  const same = await startCriServer({ runtimeName: 'containerd' });
  t.teardown(() => same.close());
  const ok = setup(t, { criSocket: same.socket, all: true });
  ok.evictor.registered('containerd');
  ok.evictor.missed([missed('c')]);
  await ok.evictor.idle();
  t.same(
    same.stops.map((r) => r.containerId),
    ['c'],
    "the registered runtime's own: stopped",
  );
});
