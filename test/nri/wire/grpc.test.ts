// The unary gRPC call on a unix socket: the request as a gRPC server sees it (HTTP/2 headers,
// the length-prefixed frame) and every way an answer can fail, each a GrpcError in our words.
// The peers are node:http2 servers that send what a gRPC server sends (grpc-status in trailers,
// or alone in the headers), and the failures a socket or a peer can have.
import t, { type Test } from 'tap';
import fs from 'node:fs';
import http2 from 'node:http2';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { NODE } from '../../helpers/bundle.ts';
import { grpcChannel, grpcFrame, GrpcError, unframe } from '../../../src/nri/wire/grpc.ts';

const CANARY = 'canary-grpc-message';

interface Seen {
  headers: http2.IncomingHttpHeaders;
  body: Buffer;
}

/** An HTTP/2 server on a unix socket; `answer` responds to each stream once its body is in. */
async function h2Server(t: Test, answer: (stream: http2.ServerHttp2Stream, seen: Seen) => void): Promise<{ socket: string; seen: Seen[] }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'envhook-h2-'));
  const socket = path.join(dir, 's');
  const seen: Seen[] = [];
  const server = http2.createServer();
  server.on('stream', (stream, headers) => {
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => {
      const s = { headers, body: Buffer.concat(chunks) };
      seen.push(s);
      answer(stream, s);
    });
    stream.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(socket, resolve));
  t.teardown(async () => {
    await new Promise((r) => server.close(r));
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return { socket, seen };
}

const grpcOk = (stream: http2.ServerHttp2Stream, message: Buffer = Buffer.alloc(0)) => {
  stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
  stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
  stream.end(grpcFrame(message));
};

t.test('the request: POST, gRPC headers, one uncompressed length-prefixed message; an OK answer', async (t) => {
  const peer = await h2Server(t, (stream) => grpcOk(stream, Buffer.from([1, 2])));
  const ch = grpcChannel(peer.socket);
  t.teardown(() => ch.close());
  const answer = await ch.call('/runtime.v1.RuntimeService/StopContainer', Buffer.from('0a0161', 'hex'), 5000);
  t.same([...answer], [1, 2], 'the answer message, without its frame');
  const [s] = peer.seen;
  t.match(s!.headers, {
    ':method': 'POST',
    ':path': '/runtime.v1.RuntimeService/StopContainer',
    'content-type': 'application/grpc',
    te: 'trailers',
    'grpc-timeout': '5000m',
  });
  t.equal(s!.body.toString('hex'), '00000000030a0161', 'flag 0, length 3 (big-endian), the message');
  // A second call reuses the connection.
  await ch.call('/x/Y', new Uint8Array(0), 5000);
  t.equal(peer.seen[1]!.body.toString('hex'), '0000000000', 'an empty message: a frame of length 0');
});

t.test('an error status: its code in our words, never the peer message', async (t) => {
  for (const trailersOnly of [false, true]) {
    const peer = await h2Server(t, (stream) => {
      if (trailersOnly)
        return stream.respond(
          { ':status': 200, 'content-type': 'application/grpc', 'grpc-status': '5', 'grpc-message': CANARY },
          { endStream: true },
        );
      stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
      stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '14', 'grpc-message': CANARY }));
      stream.end();
    });
    const ch = grpcChannel(peer.socket);
    const err = (await ch.call('/x/Y', new Uint8Array(0), 5000).catch((e: unknown) => e)) as GrpcError;
    ch.close();
    t.ok(err instanceof GrpcError);
    t.same(
      [err.kind, err.code, err.message],
      trailersOnly
        ? ['status', 5, 'the runtime answered NOT_FOUND (gRPC status 5)']
        : ['status', 14, 'the runtime answered UNAVAILABLE (gRPC status 14)'],
    );
    t.notMatch(err.message, CANARY);
  }
});

t.test('a socket that cannot be used: unreachable, with its errno code', async (t) => {
  // Short: a unix socket path has at most 107 bytes (a longer one is EINVAL).
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'envhook-h2-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const absent = path.join(dir, 'absent.sock');
  const ch = grpcChannel(absent);
  t.teardown(() => ch.close());
  await t.rejects(ch.call('/x/Y', new Uint8Array(0), 5000), {
    kind: 'unreachable',
    message: `CRI socket ${absent}: no such file or directory (ENOENT)`,
  });
  // A socket file nobody listens on any more: its process exited without removing it.
  const stale = path.join(dir, 'stale.sock');
  spawnSync(NODE, ['-e', `require('net').createServer().listen(${JSON.stringify(stale)}, () => process.exit(0))`]);
  t.ok(fs.statSync(stale).isSocket(), 'the socket file is left');
  const ch2 = grpcChannel(stale);
  t.teardown(() => ch2.close());
  await t.rejects(ch2.call('/x/Y', new Uint8Array(0), 5000), {
    kind: 'unreachable',
    message: `CRI socket ${stale}: connection refused (ECONNREFUSED): nothing listens there`,
  });
  fs.writeFileSync(path.join(dir, 'file'), '');
  const ch3 = grpcChannel(path.join(dir, 'file'));
  t.teardown(() => ch3.close());
  await t.rejects(
    ch3.call('/x/Y', new Uint8Array(0), 5000),
    { kind: 'unreachable', message: /: connection refused \(ECONNREFUSED\): nothing listens there$/ },
    'a plain file: ECONNREFUSED',
  );
  const long = path.join(dir, 'x'.repeat(120));
  const ch4 = grpcChannel(long);
  t.teardown(() => ch4.close());
  await t.rejects(
    ch4.call('/x/Y', new Uint8Array(0), 5000),
    { kind: 'unreachable', message: /: invalid argument \(EINVAL\)$/ },
    'a path longer than a unix socket path can be: EINVAL',
  );
});

t.test('no answer in time: a timeout, and the channel works again', async (t) => {
  let first = true;
  const peer = await h2Server(t, (stream) => {
    if (first) first = false;
    else grpcOk(stream);
  });
  const ch = grpcChannel(peer.socket);
  t.teardown(() => ch.close());
  await t.rejects(ch.call('/x/Y', new Uint8Array(0), 200), { kind: 'timeout', message: 'no answer within 200 ms' });
  t.same([...(await ch.call('/x/Y', new Uint8Array(0), 5000))], []);
});

t.test('answers that are not gRPC: protocol errors', async (t) => {
  const cases: [string, (s: http2.ServerHttp2Stream) => void, RegExp][] = [
    ['HTTP 404', (s) => s.respond({ ':status': 404 }, { endStream: true }), /^not a gRPC answer \(HTTP status 404/],
    [
      'not gRPC',
      (s) => {
        s.respond({ ':status': 200, 'content-type': 'text/html' });
        s.end('<html>');
      },
      /content-type "text\/html"/,
    ],
    [
      'no status',
      (s) => {
        s.respond({ ':status': 200, 'content-type': 'application/grpc' });
        s.end(grpcFrame(Buffer.alloc(0)));
      },
      /^the answer ended without a grpc-status$/,
    ],
    [
      'compressed',
      (s) => {
        s.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
        s.on('wantTrailers', () => s.sendTrailers({ 'grpc-status': '0' }));
        s.end(Buffer.from('0100000000', 'hex'));
      },
      /^the answer is not one uncompressed gRPC message$/,
    ],
    [
      'too large',
      (s) => {
        s.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
        s.on('wantTrailers', () => s.sendTrailers({ 'grpc-status': '0' }));
        s.end(grpcFrame(Buffer.alloc(100_000)));
      },
      /^the answer is larger than 65536 bytes$/,
    ],
    ['reset', (s) => s.close(http2.constants.NGHTTP2_INTERNAL_ERROR), /^the connection closed without an answer$/],
  ];
  for (const [name, answer, message] of cases) {
    const peer = await h2Server(t, answer);
    const ch = grpcChannel(peer.socket);
    await t.rejects(ch.call('/x/Y', new Uint8Array(0), 5000), { kind: 'protocol', message }, name);
    ch.close();
  }
});

t.test('unframe: exactly one uncompressed frame, or nothing', async (t) => {
  t.same([...unframe(Buffer.alloc(0))], []);
  t.same([...unframe(Buffer.from('000000000161', 'hex'))], [0x61]);
  for (const bad of ['00000000', '000000000261', '00000000016162'])
    t.throws(
      () => unframe(Buffer.from(bad, 'hex')),
      { name: 'GrpcError', message: 'the answer is not one uncompressed gRPC message' },
      bad,
    );
});
