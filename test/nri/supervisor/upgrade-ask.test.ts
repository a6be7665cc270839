// Install's upgrade request on the instance lock: no holder; a holder that refuses (not started
// from a plugin file, or its own reason); one of a version before upgrades (never answers); and a
// holder that starts the file, whose newcomer (askToShare, as a new envhook nri asks) takes over:
// `handed-over` with its pid, or `not-taken-over` when it goes away or within the wait does nothing.
import t from 'tap';
import net from 'node:net';
import { acquireLock, lockName, type LockOptions } from '../../../src/nri/supervisor/lock.ts';
import { askToShare } from '../../../src/nri/supervisor/beside.ts';
import { askUpgrade } from '../../../src/nri/supervisor/upgrade-ask.ts';

const unique = () => `/run/test-${process.pid}-${Math.random().toString(16).slice(2)}/nri.sock`;

/** A holder that shares and yields at once; `onUpgrade` as given. */
const holder = (socketPath: string, onUpgrade?: LockOptions['onUpgrade']) =>
  acquireLock({
    socketPath,
    onRequest: async () => {},
    onShare: async () => {},
    onYield: async () => {},
    ...(onUpgrade ? { onUpgrade } : {}),
  });

t.test('nobody holds the lock: none, at once', async (t) => {
  t.same(await askUpgrade(unique(), 5000), { kind: 'none' });
});

t.test('refused: a holder not started from a plugin file, or with its own reason', async (t) => {
  const a = unique();
  const lock = await holder(a);
  t.same(await askUpgrade(a, 5000), { kind: 'refused', pid: process.pid, why: 'not started from a plugin file' });
  await lock.release();
  const b = unique();
  const other = await holder(b, () => 'the plugin file is gone');
  t.same(await askUpgrade(b, 5000), { kind: 'refused', pid: process.pid, why: 'the plugin file is gone' });
  await other.release();
});

t.test('a holder of a version before upgrades (the request unknown): unanswered, after the answer time', async (t) => {
  const socketPath = unique();
  const server = net.createServer(() => {}).listen(`\0${lockName(socketPath)}`);
  await new Promise((r) => server.once('listening', r));
  t.teardown(() => void server.close());
  t.same(await askUpgrade(socketPath, 60_000), { kind: 'unanswered' });
});

t.test('started; the newcomer serves beside the holder, is listed, and the holder yields: handed-over', async (t) => {
  const socketPath = unique();
  const asked: number[] = [];
  const lock = await holder(socketPath, (by) => {
    asked.push(by);
    // the plugin file would start the new envhook nri: here this process asks to share, as it would
    setTimeout(() => void askToShare(socketPath).then((beside) => beside?.ready()), 50);
    return undefined;
  });
  t.same(await askUpgrade(socketPath, 10_000), { kind: 'handed-over', pid: process.pid, to: process.pid });
  t.same(asked, [process.pid], 'the holder heard who asked');
  await lock.release();
});

t.test('started, but the newcomer goes away before it is listed: not-taken-over with its pid', async (t) => {
  const socketPath = unique();
  let share: net.Socket | undefined;
  const lock = await holder(socketPath, () => {
    setTimeout(() => {
      share = net.createConnection(`\0${lockName(socketPath)}`);
      share.on('data', () => share!.destroy()); // ok heard, then gone
      share.write(`share ${process.pid}\n`);
    }, 50);
    return undefined;
  });
  t.same(await askUpgrade(socketPath, 10_000), { kind: 'not-taken-over', pid: process.pid, to: process.pid });
  await lock.release();
});

t.test('started, and nothing takes over within the wait: not-taken-over, the holder still serving', async (t) => {
  const socketPath = unique();
  const lock = await holder(socketPath, () => undefined);
  t.same(await askUpgrade(socketPath, 300), { kind: 'not-taken-over', pid: process.pid });
  t.same(await askUpgrade(socketPath, 300), { kind: 'not-taken-over', pid: process.pid }, 'and it can be asked again');
  await lock.release();
});
