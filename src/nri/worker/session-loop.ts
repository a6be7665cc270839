// The resident plugin's session loop: use the runtime's fd (a pre-installed plugin) or dial the
// socket, run a session, and when it ends dial again with backoff, until stopped. A plugin the
// runtime started itself dials the runtime's socket as an external plugin once its connection
// closed (it was killed, dropped after a timeout, or the runtime restarted): the runtime never
// starts it again while it runs. If that socket is not there, the runtime is gone: the daemon
// ends ('runtime-gone'), as NRI's own stub does, and the runtime starts it again at its start.
import net from 'node:net';
import type { Duplex } from 'node:stream';
import type { Logger } from '../../log.ts';
import { silentObserver, type NriObserver } from './observer.ts';
import { startPlugin } from './plugin.ts';
import type { NriCreateHandler, NriPodEvents } from './types.ts';

export interface DaemonOptions {
  /** Dial this unix socket, after `fd` (an inherited, connected socket) if there is one. */
  socketPath: string;
  fd?: number | undefined;
  /** Started by the runtime (pre-installed): end when the runtime's socket is not there. */
  preinstalled?: boolean | undefined;
  name: string;
  index: string;
  handler: NriCreateHandler;
  /** The owner watcher, shared by every session (pod-watch.ts). */
  pods?: NriPodEvents | undefined;
  observer?: NriObserver | undefined;
  log: Logger;
  backoff?: { initialMs: number; maxMs: number };
  registrationTimeoutMs?: number;
  /** How often at most "NRI socket not reachable" is logged again while it stays so. */
  unreachableLogMs?: number;
  /** Calls `fn` after `ms` and returns its cancel: the backoff's timer (setTimeout; tests pass their own). */
  timer?: (ms: number, fn: () => void) => () => void;
}

type DaemonEnd = 'stopped' | 'runtime-gone';

export interface Daemon {
  /** Resolves when the daemon has ended: stop() was called, or a pre-installed plugin's runtime is gone. */
  done: Promise<DaemonEnd>;
  stop(): void;
}

/** Dial errors that mean nobody listens on the socket (as opposed to a refused or failed session). */
const ABSENT = new Set(['ENOENT', 'ECONNREFUSED']);

export function startDaemon(opts: DaemonOptions): Daemon {
  const { log } = opts;
  const observer = opts.observer ?? silentObserver;
  const plugin = `${opts.index}-${opts.name}`;
  const { initialMs, maxMs } = opts.backoff ?? { initialMs: 100, maxMs: 1000 };
  const unreachableLogMs = opts.unreachableLogMs ?? 60_000;
  let stopping = false;
  let current: { close(reason: string): void } | undefined;
  let wake: (() => void) | undefined;

  const timer = opts.timer ?? realTimer;
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const cancel = timer(ms, resolve);
      wake = () => {
        cancel();
        resolve();
      };
    });

  async function session(socket: Duplex, via: { socket?: string; fd?: number }): Promise<boolean> {
    const s = startPlugin(socket, {
      name: opts.name,
      index: opts.index,
      handler: opts.handler,
      pods: opts.pods,
      observer,
      log,
      registrationTimeoutMs: opts.registrationTimeoutMs,
    });
    current = s;
    let ok = true;
    await s.registered.then(
      (info) => {
        log.info(
          { plugin, ...via, runtime: info.runtimeName, runtimeVersion: info.runtimeVersion, nriVersion: info.nriVersion },
          'nri: registered',
        );
        observer.registered({ ...info, socket: via.socket });
      },
      (err: Error) => {
        ok = false;
        log.warn({ plugin, ...via, reason: err.message }, 'nri: registration failed');
      },
    );
    const reason = await s.closed;
    current = undefined;
    if (!stopping) {
      log.warn({ plugin, reason }, 'nri: disconnected');
      observer.disconnected(reason);
    }
    return ok;
  }

  /** "not reachable" once, then at most every unreachableLogMs with the count of failed dials. */
  let unreachable = { since: 0, lastLog: 0, failures: 0 };
  const noteUnreachable = (code: string | undefined): void => {
    const now = Date.now();
    unreachable.failures += 1;
    if (unreachable.since === 0) unreachable = { since: now, lastLog: 0, failures: 1 };
    if (unreachable.lastLog === 0 || now - unreachable.lastLog >= unreachableLogMs) {
      log.warn(
        { socket: opts.socketPath, code, failures: unreachable.failures, forMs: now - unreachable.since },
        'nri: NRI socket not reachable',
      );
      unreachable.lastLog = now;
    }
  };

  const done = (async (): Promise<DaemonEnd> => {
    if (opts.fd !== undefined) {
      await session(new net.Socket({ fd: opts.fd, readable: true, writable: true }), { fd: opts.fd });
    }
    let delay = initialMs;
    while (!stopping) {
      log.trace({ socket: opts.socketPath }, 'nri: dial');
      let code: string | undefined;
      const socket = await dial(opts.socketPath).catch((err: NodeJS.ErrnoException) => {
        code = err.code;
        return undefined;
      });
      if (stopping) {
        socket?.destroy();
        break;
      }
      if (socket) {
        unreachable = { since: 0, lastLog: 0, failures: 0 };
        if (await session(socket, { socket: opts.socketPath })) delay = initialMs;
        if (stopping) break;
      } else if (opts.preinstalled && ABSENT.has(code ?? '')) {
        log.info(
          { plugin, socket: opts.socketPath, code },
          "nri: the runtime's NRI socket is gone: ending (the runtime starts its pre-installed plugins again when it starts)",
        );
        return 'runtime-gone';
      } else {
        noteUnreachable(code);
      }
      await sleep(delay);
      delay = Math.min(delay * 2, maxMs);
    }
    return 'stopped';
  })();

  return {
    done,
    stop() {
      stopping = true;
      current?.close('stopped');
      wake?.();
    },
  };
}

function realTimer(ms: number, fn: () => void): () => void {
  const t = setTimeout(fn, ms);
  return () => clearTimeout(t);
}

function dial(socketPath: string): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.createConnection(socketPath);
    socket.once('connect', () => {
      socket.removeListener('error', reject);
      resolve(socket);
    });
    socket.once('error', reject);
  });
}
