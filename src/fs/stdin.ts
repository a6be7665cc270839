// All of stdin, bounded: a hook's state, Podman's config, a manifest on `envhook lint -`.
import fs from 'node:fs';
import { EnvhookError, errnoReason } from '../errors.ts';

const PAUSE = new Int32Array(new SharedArrayBuffer(4));

/** All of stdin (a hook's state or Podman's config), bounded like config.json itself. */
export function readStdin(limit: number, what: string): string {
  const chunks: Buffer[] = [];
  let size = 0;
  const buf = Buffer.alloc(64 * 1024);
  for (;;) {
    let n: number;
    try {
      n = fs.readSync(0, buf, 0, buf.length, null);
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
  }
  return Buffer.concat(chunks).toString('utf8');
}
