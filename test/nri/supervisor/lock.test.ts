// The instance lock: an abstract unix socket per runtime socket (by what the socket is:
// socket-identity.test.ts); the newest instance asks the holder to stop and binds once it has;
// `stop` from uninstall; a holder that does not answer.
import t from 'tap';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { acquireLock, ask, lockName } from '../../../src/nri/supervisor/lock.ts';
import { sleep } from '../../helpers/wait.ts';

const unique = () => `/run/test-${process.pid}-${Math.random().toString(16).slice(2)}/nri.sock`;

t.test("the name: the socket directory's device, inode and birth time and the socket's name, bounded length", async (t) => {
  const dir = t.testdir({ nri: {} });
  const st = fs.statSync(path.join(dir, 'nri'), { bigint: true });
  t.equal(lockName(path.join(dir, 'nri', 'nri.sock')), `envhook-nri:${st.dev}:${st.ino}:${st.birthtimeNs}:nri.sock`);
  t.match(lockName(path.join(dir, 'nri', 'y'.repeat(100))), /^envhook-nri:sha256:[0-9a-f]{32}$/);
});

t.test('a second taker: the holder hears takeover, stops, and only then the second holds it', async (t) => {
  const socketPath = unique();
  const order: string[] = [];
  const first = await acquireLock({
    socketPath,
    onRequest: async (request) => {
      order.push(`asked ${request}`);
      await sleep(100);
      order.push('first stopped');
    },
  });
  const second = await acquireLock({
    socketPath,
    onRequest: async () => {},
    onTakeover: (pid) => order.push(`took over from ${pid === process.pid ? 'self' : pid}`),
  });
  order.push('second holds');
  t.same(order, ['asked takeover', 'first stopped', 'took over from self', 'second holds']);
  t.equal(await ask(unique(), 'stop', 1000), undefined, 'nobody holds another socket: undefined at once');
  await second.release();
  await first.release();
});

t.test('stop from another process (uninstall): answered with the pid once stopped; ping stops nothing', async (t) => {
  const socketPath = unique();
  let stopped = false;
  const lock = await acquireLock({ socketPath, onRequest: async (request) => void (stopped = request === 'stop') });
  t.equal(await ask(socketPath, 'ping', 2000), process.pid, 'ping: the holder');
  t.notOk(stopped, 'still running');
  t.equal(await ask(socketPath, 'stop', 2000), process.pid);
  t.ok(stopped);
  await lock.release();
});

t.test('a holder that never answers: one line after the timeout', async (t) => {
  const socketPath = unique();
  const server = net.createServer(() => {}).listen(`\0${lockName(socketPath)}`);
  await new Promise((r) => server.once('listening', r));
  t.teardown(() => void server.close());
  await t.rejects(
    acquireLock({
      socketPath,
      onRequest: async () => {},
      timeoutMs: 300,
    }),
    { message: `another envhook nri for ${socketPath} did not stop within 300 ms` },
  );
});

t.test('garbage on the lock: the connection dropped, the holder unharmed', async (t) => {
  const socketPath = unique();
  let asked = 0;
  const lock = await acquireLock({ socketPath, onRequest: async () => void asked++ });
  const c = net.createConnection(`\0${lockName(socketPath)}`);
  c.on('error', () => {});
  c.write('x'.repeat(100));
  await new Promise((r) => c.once('close', r));
  t.equal(asked, 0);
  t.equal(await ask(socketPath, 'stop', 2000), process.pid, 'still answers');
  await lock.release();
});
