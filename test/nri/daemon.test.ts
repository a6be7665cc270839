// The daemon loop in-process: backoff while the socket is missing or registration fails,
// prompt stop in any state.
import t from 'tap';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createLogger } from '../../src/log.ts';
import { encodeMux, encodeTtrpc, MessageType, RUNTIME_CONN } from '../../src/nri/wire/frames.ts';
import { encode, Msg } from '../../src/nri/wire/descriptors.ts';
import { inheritedFd, startDaemon } from '../../src/nri/daemon.ts';
import { EMPTY_ADJUSTMENT } from '../../src/apply/nri-adjustment.ts';
import type { NriCreateHandler } from '../../src/nri/types.ts';

// The daemon's tests are about the connection: a handler that changes nothing.
const emptyAdjustmentHandler: NriCreateHandler = () => EMPTY_ADJUSTMENT;
const base = { name: 'envhook', index: '50', handler: emptyAdjustmentHandler };

t.test('no socket yet: dials with growing delays; stop() ends it at once', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'envhook-daemon-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const logFile = path.join(dir, 'log');
  const d = startDaemon({ ...base, socketPath: path.join(dir, 'absent.sock'), log: createLogger(logFile, 'trace'), backoff: { initialMs: 20, maxMs: 160 } });
  await new Promise((r) => setTimeout(r, 700));
  const times = fs.readFileSync(logFile, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { time: number; msg: string }).filter((l) => l.msg === 'nri: dial').map((l) => l.time);
  // Without backoff it would be thousands; with it at most 9 (fewer when the machine is slow).
  t.ok(times.length >= 3 && times.length <= 9, `${times.length} attempts in 700 ms`);
  const gaps = times.slice(1).map((x, i) => x - times[i]!);
  t.ok(Math.max(...gaps) >= 140, `the delay grows to the cap (gaps ${gaps.join(', ')} ms)`);
  const stopAt = Date.now();
  d.stop();
  await d.done;
  t.ok(Date.now() - stopAt < 140, 'stopped during the backoff without waiting it out');
});

t.test('a runtime refusing the registration: closed, then tried again after a delay', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'envhook-daemon-'));
  const socketPath = path.join(dir, 'nri.sock');
  const attempts: number[] = [];
  // Answers every RegisterPlugin (stream 1 on conn 2) with an error status.
  const server = net.createServer((s) => {
    attempts.push(Date.now());
    s.once('data', () => s.write(Buffer.concat(encodeMux(RUNTIME_CONN, encodeTtrpc({ streamId: 1, type: MessageType.Response, payload: encode(Msg.Response, { status: { code: 3, message: 'invalid plugin index' } }) })))));
    s.on('error', () => {});
  });
  await new Promise<void>((r) => server.listen(socketPath, r));
  t.teardown(() => {
    server.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const logFile = path.join(dir, 'log');
  const d = startDaemon({ ...base, socketPath, log: createLogger(logFile, 'debug'), backoff: { initialMs: 50, maxMs: 400 } });
  await new Promise((r) => setTimeout(r, 600));
  d.stop();
  await d.done;
  t.ok(attempts.length >= 2 && attempts.length <= 6, `${attempts.length} attempts in 600 ms, not a tight loop`);
  t.match(fs.readFileSync(logFile, 'utf8'), /"reason":"invalid plugin index".*"msg":"nri: registration failed"/);
});

t.test('NRI_PLUGIN_SOCKET: a number or nothing', async (t) => {
  t.equal(inheritedFd({}), undefined);
  t.equal(inheritedFd({ NRI_PLUGIN_SOCKET: '' }), undefined);
  t.equal(inheritedFd({ NRI_PLUGIN_SOCKET: '3' }), 3);
  t.throws(() => inheritedFd({ NRI_PLUGIN_SOCKET: '-1' }), /not a file descriptor number/);
  t.throws(() => inheritedFd({ NRI_PLUGIN_SOCKET: '3 ' }), /not a file descriptor number/);
});
