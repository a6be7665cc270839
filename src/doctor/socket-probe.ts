// What is at a Unix socket's path, and whether something listens on it: the path looked at, then a
// connection made and closed at once, bounded by a timeout (a connect to a Unix socket answers at
// once on Linux, but the check must never hang whatever is there). A socket file is left behind
// by a process killed before it could remove it (SIGKILL, the OOM killer): only connecting tells
// it from a live one.
import fs from 'node:fs';
import net from 'node:net';
import { errnoReason } from '../errors.ts';
import { fileKind } from '../fs/confined.ts';

export type SocketProbe =
  | { state: 'listening' }
  /** Nothing at the path. */
  | { state: 'absent' }
  /** Something else at the path: `a regular file`, `a directory`, … */
  | { state: 'not-socket'; kind: string }
  /** A socket nothing listens on (ECONNREFUSED). */
  | { state: 'stale' }
  /** A listener whose queue is full (EAGAIN): its process stopped or not accepting. */
  | { state: 'full' }
  | { state: 'timeout'; ms: number }
  /** A path longer than a socket address holds (108 bytes with its NUL): none can connect to it. */
  | { state: 'too-long' }
  /** The path or the connection failed otherwise: why, as errnoReason words it. */
  | { state: 'failed'; step: 'look at' | 'connect to'; reason: string };

const PROBE_TIMEOUT_MS = 2000;
/** sun_path's 108 bytes, less the NUL. */
const MAX_SOCKET_PATH = 107;

export async function probeSocket(file: string, timeoutMs = PROBE_TIMEOUT_MS): Promise<SocketProbe> {
  let st: fs.Stats | undefined;
  try {
    st = fs.statSync(file, { throwIfNoEntry: false });
  } catch (err) {
    return { state: 'failed', step: 'look at', reason: errnoReason(err) };
  }
  if (!st) return { state: 'absent' };
  if (!st.isSocket()) return { state: 'not-socket', kind: fileKind(st) };
  return connectOnce(file, timeoutMs);
}

function connectOnce(file: string, timeoutMs: number): Promise<SocketProbe> {
  return new Promise((resolve) => {
    const conn = net.connect(file);
    const done = (r: SocketProbe) => {
      clearTimeout(timer);
      conn.destroy();
      resolve(r);
    };
    const timer = setTimeout(() => done({ state: 'timeout', ms: timeoutMs }), timeoutMs);
    conn.once('connect', () => done({ state: 'listening' }));
    conn.once('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'ECONNREFUSED') done({ state: 'stale' });
      else if (err.code === 'EAGAIN') done({ state: 'full' });
      else if (err.code === 'ENOENT')
        done({ state: 'absent' }); // removed between the look and the connect
      else if (err.code === 'EINVAL' && Buffer.byteLength(file) > MAX_SOCKET_PATH) done({ state: 'too-long' });
      else done({ state: 'failed', step: 'connect to', reason: errnoReason(err) });
    });
  });
}
