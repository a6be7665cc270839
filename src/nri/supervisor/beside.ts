// The newcomer's side of a hand-over (lock.ts): asked to serve beside the instance that holds
// the lock, it registers while the holder still serves (each container claimed by whichever the
// runtime calls first: worker/claims.ts), says `ready` once the runtime lists it, and binds the
// lock when the holder has yielded. A holder of a version before hand-overs does not answer
// `share`: after SHARE_ANSWER_MS the newcomer asks it to stop instead (lock.ts acquireLock).
import net from 'node:net';
import { address } from './lock.ts';

/** How long a holder may take to claim containers and say ok; one that does not know `share` never does. */
const SHARE_ANSWER_MS = 1500;

/** Serving beside the holder until it yields. */
export interface Beside {
  /** The holder's pid. */
  pid: number;
  /** Tells the holder this instance is in the runtime's list of plugins: it yields. */
  ready(): void;
  /**
   * Resolves when the holder's connection closed: `yielded` true once it stopped serving and
   * released the lock; false when it went away otherwise (killed, or it refused).
   */
  gone: Promise<{ yielded: boolean }>;
}

/** Asks the holder of the lock for `socketPath` to share; undefined when none holds it or it does not answer `ok`. */
export function askToShare(socketPath: string, answerMs = SHARE_ANSWER_MS): Promise<Beside | undefined> {
  return new Promise((resolve) => {
    const conn = net.createConnection(address(socketPath));
    let text = '';
    let beside: Beside | undefined;
    let yielded = false;
    let gone!: (g: { yielded: boolean }) => void;
    const timer = setTimeout(() => conn.destroy(), answerMs);
    conn.setEncoding('utf8');
    conn.on('connect', () => conn.write(`share ${process.pid}\n`));
    conn.on('data', (chunk: string) => {
      text += chunk;
      if (text.length > 64) return conn.destroy();
      if (text.includes('yielded\n')) yielded = true;
      const m = /^ok ([0-9]+)\n/.exec(text);
      if (!m || beside) return;
      clearTimeout(timer);
      beside = {
        pid: Number(m[1]),
        ready: () => void (conn.writable && conn.write('ready\n')),
        gone: new Promise((r) => (gone = r)),
      };
      resolve(beside);
    });
    conn.on('error', () => {});
    conn.on('close', () => {
      clearTimeout(timer);
      if (beside) gone({ yielded });
      else resolve(undefined);
    });
  });
}
