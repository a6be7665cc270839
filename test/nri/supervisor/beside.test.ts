// The newcomer's side of a hand-over against a holder's lock (lock.ts): share, ok, ready, the
// holder yields and releases, the newcomer binds; a holder that does not know `share` (a version
// before it) does not answer, so the newcomer asks it to stop instead; a newcomer that goes away
// before it is ready leaves the holder serving alone.
import t from 'tap';
import net from 'node:net';
import { askToShare } from '../../../src/nri/supervisor/beside.ts';
import { acquireLock, lockName } from '../../../src/nri/supervisor/lock.ts';
import { sleep } from '../../helpers/wait.ts';

const unique = () => `/run/test-${process.pid}-${Math.random().toString(16).slice(2)}/nri.sock`;

t.test('nobody holds the lock: undefined at once', async (t) => {
  const started = Date.now();
  t.equal(await askToShare(unique()), undefined);
  t.ok(Date.now() - started < 1000);
});

t.test('share, ok, ready: the holder claims first, yields at ready, then the lock is free', async (t) => {
  const socketPath = unique();
  const order: string[] = [];
  const holder = await acquireLock({
    socketPath,
    onRequest: async () => void order.push('asked to stop'),
    onShare: async (pid) => void order.push(`share by ${pid === process.pid ? 'self' : pid}`),
    onYield: async () => {
      await sleep(50);
      order.push('yielded');
    },
    onShareEnded: () => void order.push('share ended'),
  });
  const beside = await askToShare(socketPath);
  t.equal(beside?.pid, process.pid, "ok with the holder's pid");
  order.push('serving beside');
  beside!.ready();
  t.same(await beside!.gone, { yielded: true });
  t.same(order, ['share by self', 'serving beside', 'yielded']);
  const next = await acquireLock({ socketPath, onRequest: async () => {}, timeoutMs: 500 });
  t.pass('the newcomer binds the lock at once');
  await next.release();
  await holder.release();
});

t.test('the newcomer goes away before ready: the holder hears it and serves alone', async (t) => {
  const socketPath = unique();
  let ended = 0;
  const holder = await acquireLock({
    socketPath,
    onRequest: async () => {},
    onShare: async () => {},
    onYield: async () => void t.fail('no yield without ready'),
    onShareEnded: () => void ended++,
  });
  const c = net.createConnection(`\0${lockName(socketPath)}`);
  c.on('error', () => {});
  c.write(`share ${process.pid}\n`);
  await new Promise((r) => c.once('data', r));
  c.destroy();
  for (let i = 0; i < 100 && ended === 0; i++) await sleep(10);
  t.equal(ended, 1);
  const beside = await askToShare(socketPath);
  t.ok(beside, 'the next newcomer is answered');
  await holder.release();
});

t.test('a holder of a version before hand-overs never answers share: undefined after the wait', async (t) => {
  const socketPath = unique();
  const server = net.createServer(() => {}).listen(`\0${lockName(socketPath)}`);
  await new Promise((r) => server.once('listening', r));
  t.teardown(() => void server.close());
  const started = Date.now();
  t.equal(await askToShare(socketPath, 300), undefined);
  t.ok(Date.now() - started >= 290, 'after the wait');
});

t.test('the holder released (stopped) while a newcomer serves beside it: the newcomer hears it gone, not yielded', async (t) => {
  const socketPath = unique();
  const holder = await acquireLock({ socketPath, onRequest: async () => {}, onShare: async () => {}, onYield: async () => {} });
  const beside = await askToShare(socketPath);
  t.ok(beside);
  await holder.release();
  t.same(await beside!.gone, { yielded: false });
});
