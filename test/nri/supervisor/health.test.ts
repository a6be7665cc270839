// The metrics and health endpoint is started only when asked for; an address that cannot be
// bound ends the start with the lock released.
import t from 'tap';
import net from 'node:net';
import { silentLogger } from '../../../src/log.ts';
import { startHealth } from '../../../src/nri/supervisor/health.ts';
import { DurationHistogram } from '../../../src/nri/supervisor/metrics.ts';
import { sampleStatus } from '../../helpers/nri/status.ts';

const lock = () => {
  const l = { released: 0, release: async () => void l.released++ };
  return l;
};

t.test('no address: nothing listens', async (t) => {
  const l = lock();
  t.equal(await startHealth(undefined, () => sampleStatus(), new DurationHistogram(), silentLogger, l), undefined);
  t.equal(l.released, 0);
});

t.test('an address in use: the error, and the lock released', async (t) => {
  const busy = net.createServer();
  await new Promise<void>((r) => busy.listen(0, '127.0.0.1', r));
  t.teardown(() => busy.close());
  const port = (busy.address() as net.AddressInfo).port;
  const l = lock();
  await t.rejects(
    startHealth(`127.0.0.1:${port}`, () => sampleStatus(), new DurationHistogram(), silentLogger, l),
    {
      message: new RegExp(`^cannot listen on metrics address 127\\.0\\.0\\.1:${port}: `),
    },
  );
  t.equal(l.released, 1, 'released before the error goes up');
});

t.test('a free address: served until closed', async (t) => {
  const l = lock();
  const server = await startHealth('127.0.0.1:0', () => sampleStatus(), new DurationHistogram(), silentLogger, l);
  t.ok(server && server.address.port > 0);
  const res = await fetch(`http://127.0.0.1:${server!.address.port}/healthz`);
  t.equal(res.status, 200);
  await server!.close();
  t.equal(l.released, 0);
});
