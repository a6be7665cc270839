// ttRPC client and server talking to each other over a real unix socket pair of MuxConnections.
import t from 'tap';
import { silentLogger } from '../../../src/log.ts';
import { EnvhookError } from '../../../src/errors.ts';
import { MuxConnection } from '../../../src/nri/wire/mux.ts';
import { Code, RpcError, TtrpcClient, TtrpcServer } from '../../../src/nri/wire/ttrpc.ts';
import { unixPair } from '../../helpers/unix-pair.ts';
import { sleep } from '../../helpers/wait.ts';

async function pair(t: { teardown(f: () => unknown): void }): Promise<[MuxConnection, MuxConnection]> {
  const { client, server } = await unixPair(t);
  return [new MuxConnection(client, silentLogger), new MuxConnection(server, silentLogger)];
}

t.test('calls, concurrent and answered out of order, each to its own stream', async (t) => {
  const [a, b] = await pair(t);
  new TtrpcServer(b.open(1), {
    svc: {
      Echo: async (p) => {
        await sleep(p[0]!);
        return p;
      },
    },
  });
  const client = new TtrpcClient(a.open(1));
  const got = await Promise.all([30, 1, 15].map((ms) => client.call('svc', 'Echo', Uint8Array.of(ms, 9), 1000)));
  t.same(
    got.map((b) => [...b]),
    [
      [30, 9],
      [1, 9],
      [15, 9],
    ],
  );
});

t.test('error status: code and message cross the wire; an EnvhookError keeps its code Unknown', async (t) => {
  const [a, b] = await pair(t);
  new TtrpcServer(b.open(1), {
    svc: {
      Fail: () => {
        throw new EnvhookError('no such volume');
      },
      Exhausted: () => {
        throw new RpcError(Code.ResourceExhausted, 'too big');
      },
    },
  });
  const client = new TtrpcClient(a.open(1));
  const e1 = (await client.call('svc', 'Fail', new Uint8Array(), 1000).catch((e: unknown) => e)) as RpcError;
  t.same([e1.code, e1.message], [Code.Unknown, 'no such volume']);
  const e2 = (await client.call('svc', 'Exhausted', new Uint8Array(), 1000).catch((e: unknown) => e)) as RpcError;
  t.same([e2.code, e2.message], [Code.ResourceExhausted, 'too big']);
  const e3 = (await client.call('svc', 'Nope', new Uint8Array(), 1000).catch((e: unknown) => e)) as RpcError;
  t.same([e3.code, e3.message], [Code.Unimplemented, 'method svc/Nope not implemented']);
  // A name every object has is not a method: only the table's own entries are.
  for (const [service, method] of [
    ['svc', 'constructor'],
    ['svc', 'toString'],
    ['constructor', 'name'],
    ['__proto__', 'Fail'],
  ]) {
    const e = (await client.call(service!, method!, new Uint8Array(), 1000).catch((e: unknown) => e)) as RpcError;
    t.same([e.code, e.message], [Code.Unimplemented, `method ${service}/${method} not implemented`], `${service}/${method}`);
  }
});

t.test('a deadline: DeadlineExceeded; the connection closing: calls in flight fail at once', async (t) => {
  const [a, b] = await pair(t);
  new TtrpcServer(b.open(1), { svc: { Hang: () => new Promise<Uint8Array>(() => {}) } });
  const client = new TtrpcClient(a.open(1));
  void a.closed.then((reason) => client.abort(reason));
  const e1 = (await client.call('svc', 'Hang', new Uint8Array(), 50).catch((e: unknown) => e)) as RpcError;
  t.equal(e1.code, Code.DeadlineExceeded);
  const pending = client.call('svc', 'Hang', new Uint8Array(), 60_000).catch((e: unknown) => e);
  b.close('peer gone');
  const e2 = (await pending) as RpcError;
  t.equal(e2.code, Code.Unavailable);
  t.match(e2.message, /^(closed by the peer|socket error: connection reset by the peer \(ECONNRESET\))$/, 'the reason the socket went');
});
