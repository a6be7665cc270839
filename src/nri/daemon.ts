// The resident plugin: connect (or take the runtime's fd), run a session, and when the runtime
// goes away dial again with backoff, until stopped. A socket handed over in NRI_PLUGIN_SOCKET
// cannot be dialled again: when it closes, the daemon ends (the runtime starts pre-installed
// plugins itself, as NRI's own stub exits then too).
import net from 'node:net';
import type { Duplex } from 'node:stream';
import { EnvhookError } from '../errors.ts';
import type { Logger } from '../log.ts';
import { startPlugin } from './plugin.ts';
import type { NriCreateHandler, NriPodEvents } from './types.ts';

export interface DaemonOptions {
  /** Dial this unix socket, or use `fd` (an inherited, connected socket). */
  socketPath: string;
  fd?: number | undefined;
  name: string;
  index: string;
  handler: NriCreateHandler;
  /** The owner watcher, shared by every session (pod-watch.ts). */
  pods?: NriPodEvents | undefined;
  log: Logger;
  backoff?: { initialMs: number; maxMs: number };
  registrationTimeoutMs?: number;
}

export interface Daemon {
  /** Resolves when the daemon has stopped (after stop(), or when an inherited fd closed). */
  done: Promise<void>;
  stop(): void;
}

export function startDaemon(opts: DaemonOptions): Daemon {
  const { log } = opts;
  const { initialMs, maxMs } = opts.backoff ?? { initialMs: 100, maxMs: 1000 };
  let stopping = false;
  let current: { close(reason: string): void } | undefined;
  let wake: (() => void) | undefined;

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });

  async function session(socket: Duplex): Promise<boolean> {
    const s = startPlugin(socket, { name: opts.name, index: opts.index, handler: opts.handler, pods: opts.pods, log, registrationTimeoutMs: opts.registrationTimeoutMs });
    current = s;
    let ok = true;
    await s.registered.catch((err: Error) => {
      ok = false;
      log.warn({ reason: err.message }, 'NRI registration failed');
    });
    const reason = await s.closed;
    current = undefined;
    if (!stopping) log.info({ reason }, 'NRI session ended');
    return ok;
  }

  const done = (async () => {
    if (opts.fd !== undefined) {
      log.info({ fd: opts.fd }, 'NRI plugin on the runtime-provided connection');
      await session(new net.Socket({ fd: opts.fd, readable: true, writable: true }));
      return;
    }
    let delay = initialMs;
    while (!stopping) {
      const socket = await dial(opts.socketPath).catch((err: NodeJS.ErrnoException) => {
        log.debug({ socket: opts.socketPath, code: err.code }, 'NRI socket not reachable');
        return undefined;
      });
      if (stopping) {
        socket?.destroy();
        break;
      }
      if (socket) {
        log.info({ socket: opts.socketPath }, 'NRI socket connected');
        if (await session(socket)) delay = initialMs;
        if (stopping) break;
      }
      await sleep(delay);
      delay = Math.min(delay * 2, maxMs);
    }
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

/** The fd in NRI_PLUGIN_SOCKET, or undefined when it is not set. */
export function inheritedFd(env: NodeJS.ProcessEnv): number | undefined {
  const v = env.NRI_PLUGIN_SOCKET;
  if (v === undefined || v === '') return undefined;
  if (!/^[0-9]{1,9}$/.test(v)) throw new EnvhookError('NRI_PLUGIN_SOCKET is not a file descriptor number');
  return Number(v);
}
