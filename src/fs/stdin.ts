// All of stdin, bounded: a hook's state, Podman's config, a manifest on `envhook lint -`, an env
// file on `envhook check -`.
import fs from 'node:fs';
import { EnvhookError, errnoReason } from '../errors.ts';

const PAUSE = new Int32Array(new SharedArrayBuffer(4));

/** All of stdin (a hook's state or Podman's config), bounded like config.json itself. */
export function readStdin(limit: number, what: string): string {
  return readStdinBytes(limit, what).toString('utf8');
}

/**
 * All of stdin as bytes, at most `limit`. With `cut`, more is not an error: the first `limit`
 * bytes are returned and the rest left unread (a parser that checks its own size limit, given
 * one byte more than it allows, reports an oversized input as such).
 */
export function readStdinBytes(limit: number, what: string, { cut = false } = {}): Buffer {
  const chunks: Buffer[] = [];
  let size = 0;
  const buf = Buffer.alloc(64 * 1024);
  for (;;) {
    let n: number;
    try {
      n = fs.readSync(0, buf, 0, Math.min(buf.length, cut ? limit - size : buf.length), null);
    } catch (cause) {
      const code = (cause as NodeJS.ErrnoException).code;
      if (code === 'EAGAIN') {
        // A non-blocking pipe with no data yet: wait a little instead of spinning.
        Atomics.wait(PAUSE, 0, 0, 5);
        continue;
      }
      if (code === 'EOF') break;
      throw new EnvhookError(`cannot read ${what} from stdin: ${errnoReason(cause)}`, { cause });
    }
    if (n === 0) break;
    size += n;
    if (size > limit) throw new EnvhookError(`${what} on stdin is larger than ${limit} bytes`);
    chunks.push(Buffer.from(buf.subarray(0, n)));
    if (cut && size === limit) break;
  }
  return Buffer.concat(chunks);
}
