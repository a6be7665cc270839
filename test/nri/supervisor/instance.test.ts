// One instance's life around its supervisor, with a stand-in for the supervisor (it records what
// it is told) and the real lock: alone it holds the lock; beside a holder it serves in sharing
// mode, says ready once listed, and holds the lock once the holder yielded; at SIGTERM it stops at
// once, or with a hand-over wait serves on until a newer instance took over, at most that long.
import t from 'tap';
import { silentLogger } from '../../../src/log.ts';
import { Instance, type Serving } from '../../../src/nri/supervisor/instance.ts';
import { askToShare } from '../../../src/nri/supervisor/beside.ts';
import type { YieldMarks } from '../../../src/nri/supervisor/yield-marks.ts';
import { sampleStatus } from '../../helpers/nri/status.ts';

const unique = () => `/run/test-${process.pid}-${Math.random().toString(16).slice(2)}/nri.sock`;

interface Fake extends Serving {
  told: string[];
  sharing: boolean;
  listed(): void;
}

function fakeServing(told: string[], sharing: boolean, onListed: () => void): Fake {
  let end!: () => void;
  const done = new Promise<void>((r) => (end = r));
  const f: Fake = {
    told,
    sharing,
    listed: onListed,
    status: () => sampleStatus(),
    stop: async (reason) => {
      told.push(`stop: ${reason}`);
      end();
    },
    share: async (on) => {
      told.push(`share ${on}`);
      f.sharing = on;
    },
    republish: () => void told.push('republish'),
    done,
  };
  return f;
}

function instance(socketPath: string, waitMs: number, podUid?: string) {
  const told: string[] = [];
  const marks: string[] = [];
  let serving: Fake | undefined;
  const yieldMarks: YieldMarks = {
    has: (u) => marks.includes(u),
    set: (u) => void marks.push(u),
    clear: (u) => void marks.splice(marks.indexOf(u), 1),
  };
  const i = new Instance({
    socketPath,
    plugin: '50-envhook',
    log: silentLogger,
    podUid,
    marks: yieldMarks,
    handoverWaitMs: waitMs,
    startHealth: async () => undefined,
    startServing: (sharing, onListed) => {
      told.push(`start sharing=${sharing}`);
      serving = fakeServing(told, sharing, onListed);
      return serving;
    },
  });
  return { i, told, marks, serving: () => serving! };
}

t.test('alone: holds the lock and serves; SIGTERM without a hand-over wait stops at once', async (t) => {
  const a = instance(unique(), 0);
  await a.i.start();
  a.i.signal('SIGTERM');
  t.equal(await a.i.untilEnded(), 'stopped');
  t.same(a.told, ['start sharing=false', 'stop: SIGTERM']);
});

t.test('a newer instance: serves beside the holder, ready once listed, the holder yields, it holds the lock', async (t) => {
  const socketPath = unique();
  const old = instance(socketPath, 0, 'pod-a');
  await old.i.start();
  const next = instance(socketPath, 0, 'pod-b');
  const started = next.i.start();
  for (let n = 0; n < 200 && next.told.length === 0; n++) await new Promise((r) => setTimeout(r, 10));
  t.same(old.told, ['start sharing=false', 'share true'], 'the holder claims containers first');
  t.same(old.marks, ['pod-a'], 'and marks its pod as handing over');
  t.same(next.told, ['start sharing=true']);
  next.serving().listed();
  await started;
  t.equal(await old.i.untilEnded(), 'yielded');
  t.match(old.told.at(-1), /^stop: handed over to pid \d+$/);
  t.same(next.told, ['start sharing=true', 'share false', 'republish'], 'the newcomer alone: claims off, its status written');
  t.equal(await askToShare(socketPath, 300).then((b) => b?.pid), process.pid, 'the newcomer holds the lock and answers the next one');
  next.i.signal('SIGTERM');
  await next.i.untilEnded();
});

t.test('SIGTERM with a hand-over wait and no successor: serves on, then stops', async (t) => {
  const a = instance(unique(), 300);
  await a.i.start();
  const at = Date.now();
  a.i.signal('SIGTERM');
  t.same(a.told, ['start sharing=false'], 'not stopped at once');
  t.equal(await a.i.untilEnded(), 'stopped');
  t.ok(Date.now() - at >= 290, 'after the wait');
  t.match(a.told.at(-1), /^stop: SIGTERM: no envhook nri took over within 300 ms$/);
});

t.test('SIGTERM with a hand-over wait, then a successor: it hands over and ends yielded; a second signal stops at once', async (t) => {
  const socketPath = unique();
  const old = instance(socketPath, 60_000);
  await old.i.start();
  old.i.signal('SIGTERM');
  const next = instance(socketPath, 0);
  const started = next.i.start();
  for (let n = 0; n < 200 && next.told.length === 0; n++) await new Promise((r) => setTimeout(r, 10));
  next.serving().listed();
  await started;
  t.equal(await old.i.untilEnded(), 'yielded', 'long before the wait ran out');
  const other = instance(unique(), 60_000);
  await other.i.start();
  other.i.signal('SIGTERM');
  other.i.signal('SIGTERM');
  t.equal(await other.i.untilEnded(), 'stopped');
  next.i.signal('SIGTERM');
  await next.i.untilEnded();
});
