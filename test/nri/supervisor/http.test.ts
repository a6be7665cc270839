// The metrics and health endpoint over real sockets: the three paths, the address forms, and
// bad peers on raw TCP sockets (garbage, huge headers, a slowloris, an idle connection, a flood
// of connections), after each of which the server still answers.
import t, { type Test } from 'tap';
import http from 'node:http';
import net from 'node:net';
import { parseAddress, startHealthServer, METRICS_CONTENT_TYPE, type HealthServer } from '../../../src/nri/supervisor/http.ts';
import { DurationHistogram, renderMetrics } from '../../../src/nri/supervisor/metrics.ts';
import { EnvhookError } from '../../../src/errors.ts';
import { silentLogger, type Logger } from '../../../src/log.ts';
import type { NriStatus } from '../../../src/nri/status-file.ts';
import { sampleStatus } from '../../helpers/nri/status.ts';
import { waitFor } from '../../helpers/wait.ts';

t.setTimeout(60_000);

interface Reply {
  status: number;
  type: string | undefined;
  body: string;
}

function request(port: number, path: string, method = 'GET', host = '127.0.0.1'): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host, port, path, method, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode!, type: res.headers['content-type'], body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Opens a raw connection, sends `data` (if any), and resolves with all it got once the server closed it. */
function rawUntilClosed(port: number, data?: string | Buffer, opts: { trickle?: string } = {}): Promise<string> {
  return new Promise((resolve) => {
    const sock = net.connect(port, '127.0.0.1');
    let got = '';
    let timer: NodeJS.Timeout | undefined;
    sock.on('connect', () => {
      if (data !== undefined) sock.write(data);
      // a slowloris: one more byte of header every 200 ms, never the end of the headers
      if (opts.trickle) timer = setInterval(() => sock.writable && sock.write(opts.trickle!), 200);
    });
    sock.on('data', (d) => (got += d.toString('latin1')));
    sock.on('error', () => {});
    sock.on('close', () => {
      clearInterval(timer);
      resolve(got);
    });
  });
}

/** Polls `cond` every 20 ms until it holds, for at most 30 s. */
const until = (cond: () => boolean | Promise<boolean>): Promise<void> => waitFor(cond, 30_000, 'condition', 20);

async function start(t: Test, status: () => NriStatus, log: Logger = silentLogger, address = '127.0.0.1:0'): Promise<HealthServer> {
  const server = await startHealthServer({ address, status, histogram: new DurationHistogram(), log });
  t.teardown(() => server.close());
  return server;
}

t.test('addresses', async (t) => {
  t.same(parseAddress('127.0.0.1:9901'), { host: '127.0.0.1', port: 9901 });
  t.same(parseAddress('[::1]:9901'), { host: '::1', port: 9901 });
  // an IP of either family in brackets: `[$(HOST_IP)]:9901` with the node's IPv4 or IPv6 address
  t.same(parseAddress('[192.0.2.10]:9901'), { host: '192.0.2.10', port: 9901 });
  t.same(parseAddress('[2001:db8::10]:9901'), { host: '2001:db8::10', port: 9901 });
  t.same(parseAddress(':9901'), { host: undefined, port: 9901 });
  t.same(parseAddress('localhost:80'), { host: 'localhost', port: 80 });
  t.same(parseAddress('node-1.example:0'), { host: 'node-1.example', port: 0 });
  for (const bad of [
    '9901',
    '::1:9901',
    '[::1]',
    '[nope]:1',
    '[localhost]:1',
    '[192.0.2.300]:1',
    '2001:db8::10:9901',
    '127.0.0.1:65536',
    '127.0.0.1:',
    'a b:1',
    '-x:1',
    ':99999',
    '127.0.0.1:9901 ',
    '',
  ]) {
    t.throws(
      () => parseAddress(bad),
      new EnvhookError(
        `metrics address ${JSON.stringify(bad)}: expected host:port, [IPv6 or IPv4]:port or :port (every interface), port 0-65535`,
      ),
      bad,
    );
  }
  await t.rejects(
    startHealthServer({ address: 'x', status: () => sampleStatus(), histogram: new DurationHistogram(), log: silentLogger }),
    { message: /^metrics address "x": expected/ },
  );
});

t.test('an IPv4 address in brackets is listened on as that address', async (t) => {
  const server = await start(t, () => sampleStatus(), silentLogger, '[127.0.0.1]:0');
  t.equal(server.address.host, '127.0.0.1');
  t.equal((await request(server.address.port, '/healthz')).status, 200);
});

t.test('/healthz, /readyz, /metrics; anything else refused', async (t) => {
  let status = sampleStatus();
  const hist = new DurationHistogram();
  hist.observe(0.0008);
  const server = await startHealthServer({ address: '127.0.0.1:0', status: () => status, histogram: hist, log: silentLogger });
  t.teardown(() => server.close());
  t.equal(server.address.host, '127.0.0.1');
  const port = server.address.port;
  t.same(await request(port, '/healthz'), { status: 200, type: 'text/plain; charset=utf-8', body: 'ok\n' });
  t.same(await request(port, '/readyz'), {
    status: 200,
    type: 'text/plain; charset=utf-8',
    body: 'connected since 2026-11-26T10:00:00.250Z\n',
  });
  const m = await request(port, '/metrics?x=1');
  t.equal(m.status, 200);
  t.equal(m.type, METRICS_CONTENT_TYPE);
  t.equal(m.body, renderMetrics(status, hist), 'the snapshot at request time');
  t.match(m.body, /^envhook_nri_request_duration_seconds_count 1$/m);
  status = sampleStatus({ connected: false, since: '2026-11-26T11:00:00.000Z' });
  t.same(await request(port, '/readyz'), {
    status: 503,
    type: 'text/plain; charset=utf-8',
    body: 'not connected since 2026-11-26T11:00:00.000Z\n',
  });
  t.equal((await request(port, '/healthz')).status, 200, 'alive while not connected');
  t.match((await request(port, '/metrics')).body, /^envhook_nri_connected 0$/m);
  t.same(await request(port, '/healthz', 'HEAD'), { status: 200, type: 'text/plain; charset=utf-8', body: '' });
  t.equal((await request(port, '/metrics', 'POST')).status, 405);
  t.equal((await request(port, '/', 'GET')).status, 404);
  t.equal((await request(port, '/healthz/x')).status, 404);
});

t.test('a status that cannot be had: 500, logged, the server goes on', async (t) => {
  const warned: unknown[] = [];
  const log = { ...silentLogger, warn: (o: unknown) => warned.push(o), info: () => {}, debug: () => {} } as unknown as Logger;
  let fail = true;
  const server = await start(
    t,
    () => {
      if (fail) throw new Error('CANARY-VALUE');
      return sampleStatus();
    },
    log,
  );
  const r = await request(server.address.port, '/metrics');
  t.same(r, { status: 500, type: 'text/plain; charset=utf-8', body: 'internal error\n' });
  t.notMatch(r.body, 'CANARY');
  t.equal(warned.length, 1);
  fail = false;
  t.equal((await request(server.address.port, '/readyz')).status, 200);
});

t.test('bad peers never end the process and never keep a socket', async (t) => {
  const server = await start(t, () => sampleStatus());
  const port = server.address.port;
  const alive = async (what: string) => t.equal((await request(port, '/healthz')).status, 200, `still serving after ${what}`);

  t.match(await rawUntilClosed(port, '\x00\x01\x02 garbage\r\n\r\n'), /^HTTP\/1\.1 400 Bad Request\r\n/, 'garbage: 400, closed');
  await alive('garbage');
  t.match(
    await rawUntilClosed(port, `GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(64 * 1024)}\r\n\r\n`),
    /^HTTP\/1\.1 431 /,
    'huge headers: 431, closed',
  );
  await alive('huge headers');
  t.match(
    await rawUntilClosed(port, `GET /metrics HTTP/1.1\r\nHost: x\r\n${'X-A: b\r\n'.repeat(3000)}\r\n`),
    /^HTTP\/1\.1 431 /,
    'many headers: 431',
  );
  await alive('many headers');
  t.match(
    await rawUntilClosed(port, 'GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: ', { trickle: 'a' }),
    /^(HTTP\/1\.1 408 Request Timeout\r\n[^]*)?$/,
    'slowloris: cut off by headersTimeout',
  );
  await alive('a slowloris');
  t.match(await rawUntilClosed(port), /^(HTTP\/1\.1 408 Request Timeout\r\n[^]*)?$/, 'a connection that sends nothing is closed');
  await alive('an idle connection');
  t.match(
    await rawUntilClosed(port, 'POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\nab'),
    /^HTTP\/1\.1 405 /,
    'a body that never comes: answered, then closed',
  );
  await alive('a stalled body');
  // 64 connections at once against a limit of 32: the extra ones are closed at once.
  const socks = await Promise.all(
    Array.from(
      { length: 64 },
      () =>
        new Promise<net.Socket>((resolve) => {
          const s = net.connect(port, '127.0.0.1', () => resolve(s));
          s.on('error', () => {});
        }),
    ),
  );
  const closed = () => socks.filter((s) => s.closed || s.readableEnded).length;
  await until(() => closed() >= 32);
  t.equal(closed(), 32, 'the connections over the limit are closed at once, the others kept');
  for (const s of socks) s.destroy();
  // The server counts a connection gone once it has seen it close: until then it refuses more.
  await until(async () => (await request(port, '/healthz').catch(() => undefined))?.status === 200);
  await alive('a flood of connections');
});

t.test('close() ends open connections; a port in use is one line', async (t) => {
  const server = await startHealthServer({
    address: '127.0.0.1:0',
    status: () => sampleStatus(),
    histogram: new DurationHistogram(),
    log: silentLogger,
  });
  const port = server.address.port;
  const keep = new http.Agent({ keepAlive: true });
  await new Promise<void>((resolve) =>
    http.get({ host: '127.0.0.1', port, path: '/healthz', agent: keep }, (res) => res.resume().on('end', resolve)),
  );
  await t.rejects(
    startHealthServer({
      address: `127.0.0.1:${port}`,
      status: () => sampleStatus(),
      histogram: new DurationHistogram(),
      log: silentLogger,
    }),
    new EnvhookError(
      `cannot listen on metrics address 127.0.0.1:${port}: address already in use (EADDRINUSE): another process listens there; choose a free port or stop that process`,
    ),
  );
  await server.close();
  keep.destroy();
  await t.rejects(request(port, '/healthz'), { code: 'ECONNREFUSED' }, 'nothing listens after close');
});

const V6 = await startHealthServer({
  address: '[::1]:0',
  status: () => sampleStatus(),
  histogram: new DurationHistogram(),
  log: silentLogger,
}).then(
  (s) => s.close().then(() => undefined),
  (err: Error) => `no IPv6 loopback here (${err.message})`,
);

t.test('IPv6 loopback', { skip: V6 }, async (t) => {
  const server = await start(t, () => sampleStatus(), silentLogger, '[::1]:0');
  t.equal(server.address.host, '::1');
  t.equal((await request(server.address.port, '/healthz', 'GET', '::1')).status, 200);
});
