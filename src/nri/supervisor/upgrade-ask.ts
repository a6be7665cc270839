// Install's side of an upgrade without a runtime restart (upgrade.ts): ask the envhook nri that
// holds the instance lock for the runtime's NRI socket to start its plugin file anew, and wait
// until the instance so started has taken over. A holder of a version before upgrades does not
// answer `upgrade` at all: after ANSWER_MS install says the runtime restart is needed, as before.
import net from 'node:net';
import { address } from './lock.ts';

/**
 * How long a holder that knows `upgrade` may take to answer `started` or `refused`: it only checks
 * and spawns, but a supervisor on a loaded node can be seconds late (its lock answered `ping` after
 * 0.5 s and more at a load of 20); a holder of an older version costs install this wait once.
 */
const ANSWER_MS = 10_000;

export type UpgradeAnswer =
  /** Nothing holds the lock: no envhook nri runs for this socket. */
  | { kind: 'none' }
  /** The holder did not answer: a version before upgrades (or hung). */
  | { kind: 'unanswered' }
  | { kind: 'refused'; pid: number; why: string }
  /** The new instance (`to`) took over from the holder (`pid`). */
  | { kind: 'handed-over'; pid: number; to: number }
  /** Started, but the new instance went away (`to`) or did not take over within the wait (`to` undefined). */
  | { kind: 'not-taken-over'; pid: number; to?: number };

/** Asks for the upgrade and resolves with how it ended; `waitMs` bounds the whole hand-over. */
export function askUpgrade(socketPath: string, waitMs: number, { root }: { root?: string } = {}): Promise<UpgradeAnswer> {
  return new Promise((resolve) => {
    const conn = net.createConnection(address(socketPath, root));
    let text = '';
    let holder: number | undefined;
    let answer: UpgradeAnswer | undefined;
    const finish = (a: UpgradeAnswer) => {
      answer ??= a;
      conn.destroy();
    };
    let timer = setTimeout(() => finish({ kind: 'unanswered' }), ANSWER_MS);
    conn.setEncoding('utf8');
    conn.on('connect', () => conn.write(`upgrade ${process.pid}\n`));
    conn.on('data', (chunk: string) => {
      text += chunk;
      if (text.length > 512) return finish({ kind: 'unanswered' });
      for (let nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n')) {
        const line = text.slice(0, nl);
        text = text.slice(nl + 1);
        const [word, n, ...rest] = line.split(' ');
        const pid = Number(n);
        if (word === 'refused') return finish({ kind: 'refused', pid, why: rest.join(' ') });
        if (word === 'started' && holder === undefined) {
          holder = pid;
          clearTimeout(timer);
          timer = setTimeout(() => finish({ kind: 'not-taken-over', pid }), waitMs);
        } else if (holder !== undefined && word === 'handed-over') return finish({ kind: 'handed-over', pid: holder, to: pid });
        else if (holder !== undefined && word === 'not-taken-over') return finish({ kind: 'not-taken-over', pid: holder, to: pid });
      }
    });
    conn.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'ECONNREFUSED' || err.code === 'ENOENT') answer ??= { kind: 'none' };
    });
    conn.on('close', () => {
      clearTimeout(timer);
      // closed without a word about the new instance: the holder ended (it released the lock after it yielded)
      resolve(answer ?? (holder !== undefined ? { kind: 'not-taken-over', pid: holder } : { kind: 'unanswered' }));
    });
  });
}
