// MuxConnection on a real unix socket: frames routed by connection id whatever the chunking,
// anything malformed closes the socket once, with one log line.
import t from 'tap';
import fs from 'node:fs';
import type net from 'node:net';
import path from 'node:path';
import { createLogger } from '../../../src/log.ts';
import { encodeMux, encodeTtrpc, MessageType } from '../../../src/nri/wire/frames.ts';
import { MuxConnection } from '../../../src/nri/wire/mux.ts';
import { unixPair } from '../../helpers/unix-pair.ts';
import { sleep } from '../../helpers/wait.ts';

async function connected(t: { teardown(f: () => unknown): void }): Promise<{ raw: net.Socket; mux: MuxConnection; log: () => string }> {
  const { client, server, dir } = await unixPair(t);
  const logFile = path.join(dir, 'log');
  const mux = new MuxConnection(client, createLogger(logFile, 'debug'));
  return { raw: server, mux, log: () => (fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8') : '') };
}

t.test('frames for two connections, one byte at a time, each to its channel', async (t) => {
  const { raw, mux } = await connected(t);
  const got: [number, number, string][] = [];
  for (const id of [1, 2]) mux.open(id).onFrame = (f) => got.push([id, f.streamId, f.payload.toString()]);
  const bytes = Buffer.concat([
    ...encodeMux(2, encodeTtrpc({ streamId: 1, type: MessageType.Response, payload: Buffer.from('two') })),
    ...encodeMux(1, encodeTtrpc({ streamId: 3, type: MessageType.Request, payload: Buffer.from('one') })),
  ]);
  for (const b of bytes) {
    raw.write(Buffer.of(b));
    await new Promise((r) => setImmediate(r));
  }
  await sleep(50);
  t.same(got, [
    [2, 1, 'two'],
    [1, 3, 'one'],
  ]);
});

t.test('a ttRPC frame split over two mux frames is read whole (NRI splits large writes)', async (t) => {
  const { raw, mux } = await connected(t);
  const frame = encodeTtrpc({ streamId: 1, type: MessageType.Request, payload: Buffer.from('abcdef') });
  const got = new Promise<string>((resolve) => (mux.open(1).onFrame = (f) => resolve(f.payload.toString())));
  raw.write(Buffer.concat([...encodeMux(1, frame.subarray(0, 4)), ...encodeMux(1, frame.subarray(4))]));
  t.equal(await got, 'abcdef');
});

t.test('writes reach the socket as mux frames; after close nothing is written and close is once', async (t) => {
  const { raw, mux, log } = await connected(t);
  const ch = mux.open(2);
  const received = new Promise<Buffer>((resolve) => raw.once('data', resolve));
  ch.send(Buffer.from('xyz'));
  t.equal((await received).toString('hex'), '0000000200000003' + Buffer.from('xyz').toString('hex'));
  mux.close('first');
  mux.close('second');
  ch.send(Buffer.from('late'));
  t.equal(await mux.closed, 'first');
  t.equal(
    log()
      .split('\n')
      .filter((l) => l.includes('NRI connection closed')).length,
    1,
    'one log line',
  );
  t.ok(mux.isClosed);
});

t.test('a frame for a connection nobody opened closes the socket', async (t) => {
  const { raw, mux } = await connected(t);
  mux.open(1);
  raw.write(Buffer.concat(encodeMux(3, Buffer.from('x'))));
  t.equal(await mux.closed, 'multiplexer frame for unknown connection 3');
  await new Promise<void>((resolve) => (raw.destroyed ? resolve() : raw.once('close', () => resolve())));
  t.pass('the peer sees the close');
});
