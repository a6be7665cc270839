// The daemon loop in-process: backoff while the socket is missing or registration fails,
// prompt stop in any state.
import t from 'tap';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createLogger } from '../../../src/log.ts';
import { encodeMux, encodeTtrpc, MessageType, RUNTIME_CONN } from '../../../src/nri/wire/frames.ts';
import { encode, Msg } from '../../../src/nri/wire/descriptors.ts';
import { startDaemon } from '../../../src/nri/worker/session-loop.ts';
import { EMPTY_ADJUSTMENT } from '../../../src/apply/nri-adjustment.ts';
import type { NriCreateHandler } from '../../../src/nri/worker/types.ts';
import { sleep } from '../../helpers/wait.ts';

// The daemon's tests are about the connection: a handler that changes nothing.
const emptyAdjustmentHandler: NriCreateHandler = () => EMPTY_ADJUSTMENT;
const base = { name: 'envhook', index: '50', handler: emptyAdjustmentHandler };

/** The backoff's timer by hand: every wait recorded, and over only when the test fires it. */
function handTimer() {
  const waits: { ms: number; fire: () => void; cancelled: boolean }[] = [];
  return {
    waits,
    timer(ms: number, fire: () => void) {
      const w = { ms, fire, cancelled: false };
      waits.push(w);
      return () => void (w.cancelled = true);
    },
    /** The daemon's n-th wait, once it has begun (the file's timeout fails a daemon that never waits). */
    async nth(n: number) {
      while (waits.length < n) await sleep(5);
      return waits[n - 1]!;
    },
  };
}

const dials = (logFile: string) =>
  fs
    .readFileSync(logFile, 'utf8')
    .split('\n')
    .filter((l) => l.includes('"msg":"nri: dial"')).length;

t.test('no socket yet: dials with growing delays; stop() ends it at once', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'envhook-daemon-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const logFile = path.join(dir, 'log');
  const h = handTimer();
  const d = startDaemon({
    ...base,
    socketPath: path.join(dir, 'absent.sock'),
    log: createLogger(logFile, 'trace'),
    backoff: { initialMs: 20, maxMs: 160 },
    timer: h.timer,
  });
  for (let n = 1; n <= 6; n++) (await h.nth(n)).fire();
  const pending = await h.nth(7);
  t.same(
    h.waits.map((w) => w.ms),
    [20, 40, 80, 160, 160, 160, 160],
    'the delay doubles up to the cap',
  );
  t.equal(dials(logFile), 7, 'one dial per wait, not a tight loop');
  d.stop();
  t.equal(await d.done, 'stopped');
  t.ok(pending.cancelled, 'stopped during the backoff without waiting it out');
  t.equal(dials(logFile), 7, 'no dial after stop()');
});

t.test('a runtime refusing the registration: closed, then tried again after a delay', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'envhook-daemon-'));
  const socketPath = path.join(dir, 'nri.sock');
  let attempts = 0;
  // Answers every RegisterPlugin (stream 1 on conn 2) with an error status.
  const server = net.createServer((s) => {
    attempts++;
    s.once('data', () =>
      s.write(
        Buffer.concat(
          encodeMux(
            RUNTIME_CONN,
            encodeTtrpc({
              streamId: 1,
              type: MessageType.Response,
              payload: encode(Msg.Response, { status: { code: 3, message: 'invalid plugin index' } }),
            }),
          ),
        ),
      ),
    );
    s.on('error', () => {});
  });
  await new Promise<void>((r) => server.listen(socketPath, r));
  t.teardown(() => {
    server.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const logFile = path.join(dir, 'log');
  const h = handTimer();
  const d = startDaemon({
    ...base,
    socketPath,
    log: createLogger(logFile, 'debug'),
    backoff: { initialMs: 50, maxMs: 400 },
    timer: h.timer,
  });
  for (let n = 1; n <= 4; n++) (await h.nth(n)).fire();
  await h.nth(5);
  d.stop();
  await d.done;
  t.equal(attempts, 5, 'each refused session is followed by a wait, not a tight loop');
  t.same(
    h.waits.map((w) => w.ms),
    [50, 100, 200, 400, 400],
    'a refused registration does not reset the delay',
  );
  t.match(fs.readFileSync(logFile, 'utf8'), /"reason":"invalid plugin index".*"msg":"nri: registration failed"/);
});
