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

/**
 * A pre-installed plugin of containerd 1.7.24 and earlier (NRI 0.6.1) gets no Synchronize: it is
 * in the runtime's list once registered. Counted listed this long after its Configure.
 */
const LISTED_WITHOUT_SYNC_MS = 1000;

type DaemonEnd = 'stopped' | 'runtime-gone';

export interface Daemon {
  /** Resolves when the daemon has ended: stop() was called, or a pre-installed plugin's runtime is gone. */
  done: Promise<DaemonEnd>;
  stop(): void;
}

/** Dial errors that mean nobody listens on the socket (as opposed to a refused or failed session). */
const ABSENT = new Set(['ENOENT', 'ECONNREFUSED']);

export function startDaemon(opts: DaemonOptions): Daemon {
  const loop = new SessionLoop(opts);
  return { done: loop.run(), stop: () => loop.stop() };
}

/** The sessions one after another: the handed connection first, then dial, with backoff. */
class SessionLoop {
  private readonly opts: DaemonOptions;
  private readonly log: Logger;
  private readonly observer: NriObserver;
  private readonly plugin: string;
  private stopping = false;
  private current: { close(reason: string): void } | undefined;
  private wake: (() => void) | undefined;
  /** "not reachable" once, then at most every unreachableLogMs with the count of failed dials. */
  private unreachable = { since: 0, lastLog: 0, failures: 0 };

  constructor(opts: DaemonOptions) {
    this.opts = opts;
    this.log = opts.log;
    this.observer = opts.observer ?? silentObserver;
    this.plugin = `${opts.index}-${opts.name}`;
  }

  async run(): Promise<DaemonEnd> {
    const { opts, log } = this;
    const { initialMs, maxMs } = opts.backoff ?? { initialMs: 100, maxMs: 1000 };
    if (opts.fd !== undefined) await this.session(new net.Socket({ fd: opts.fd, readable: true, writable: true }), { fd: opts.fd });
    let delay = initialMs;
    while (!this.stopping) {
      log.trace({ socket: opts.socketPath }, 'nri: dial');
      let code: string | undefined;
      const socket = await dial(opts.socketPath).catch((err: NodeJS.ErrnoException) => {
        code = err.code;
        return undefined;
      });
      if (this.stopping) {
        socket?.destroy();
        break;
      }
      if (socket) {
        this.unreachable = { since: 0, lastLog: 0, failures: 0 };
        if (await this.session(socket, { socket: opts.socketPath })) delay = initialMs;
        if (this.stopping) break;
      } else if (opts.preinstalled && ABSENT.has(code ?? '')) {
        log.info(
          { plugin: this.plugin, socket: opts.socketPath, code },
          "nri: the runtime's NRI socket is gone: ending (the runtime starts its pre-installed plugins again when it starts)",
        );
        return 'runtime-gone';
      } else {
        this.noteUnreachable(code);
      }
      await this.sleep(delay);
      delay = Math.min(delay * 2, maxMs);
    }
    return 'stopped';
  }

  stop(): void {
    this.stopping = true;
    this.current?.close('stopped');
    this.wake?.();
  }

  /** One session until its connection closes; false when registration failed (the backoff is not reset). */
  private async session(socket: Duplex, via: { socket?: string; fd?: number }): Promise<boolean> {
    const { opts, log, observer, plugin } = this;
    let listed = false;
    const onListed = () => {
      if (listed || s.closedNow()) return;
      listed = true;
      observer.listed?.();
    };
    const s = startPlugin(socket, {
      name: opts.name,
      index: opts.index,
      handler: opts.handler,
      pods: opts.pods,
      observer,
      log,
      registrationTimeoutMs: opts.registrationTimeoutMs,
      onListed,
    });
    this.current = s;
    let ok = true;
    await s.registered.then(
      (info) => {
        log.info(
          { plugin, ...via, runtime: info.runtimeName, runtimeVersion: info.runtimeVersion, nriVersion: info.nriVersion },
          'nri: registered',
        );
        observer.registered({ ...info, socket: via.socket });
        if (via.fd !== undefined) setTimeout(onListed, LISTED_WITHOUT_SYNC_MS).unref();
      },
      (err: Error) => {
        ok = false;
        log.warn({ plugin, ...via, reason: err.message }, 'nri: registration failed');
      },
    );
    const reason = await s.closed;
    this.current = undefined;
    if (!this.stopping) {
      log.warn({ plugin, reason }, 'nri: disconnected');
      observer.disconnected(reason);
    }
    return ok;
  }

  private noteUnreachable(code: string | undefined): void {
    const now = Date.now();
    const u = this.unreachable;
    u.failures += 1;
    if (u.since === 0) this.unreachable = { since: now, lastLog: 0, failures: 1 };
    const v = this.unreachable;
    if (v.lastLog === 0 || now - v.lastLog >= (this.opts.unreachableLogMs ?? 60_000)) {
      this.log.warn({ socket: this.opts.socketPath, code, failures: v.failures, forMs: now - v.since }, 'nri: NRI socket not reachable');
      v.lastLog = now;
    }
  }

  /** The backoff's wait; stop() ends it at once. */
  private sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const cancel = (this.opts.timer ?? realTimer)(ms, resolve);
      this.wake = () => {
        cancel();
        resolve();
      };
    });
  }
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
