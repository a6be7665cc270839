// One plugin session on one NRI socket: register with the runtime, then serve its calls from the
// typed method table (methods.ts: Configure, Synchronize, Shutdown, the pod events and
// CreateContainer, which calls the handler: create-container.ts). The session ends when the
// socket closes, for whatever reason; `closed` says why (the session loop decides whether to
// reconnect). Evicting the containers it reports missed is the worker's, over CRI (evict.ts).
import type { Duplex } from 'node:stream';
import type { Logger } from '../../log.ts';
import { encode, Msg } from '../wire/descriptors.ts';
import { PLUGIN_CONN, RUNTIME_CONN } from '../wire/frames.ts';
import { MuxConnection } from '../wire/mux.ts';
import { NRI_API_VERSION, PLUGIN_SERVICE, RUNTIME_SERVICE } from '../wire/nri-schema.ts';
import { TtrpcClient, TtrpcServer } from '../wire/ttrpc.ts';
import type { RegisteredInfo } from '../worker-messages.ts';
import { PLUGIN_CALLS } from './methods.ts';
import { silentObserver, type NriObserver } from './observer.ts';
import { newSessionState, statusLine } from './session-state.ts';
import type { NriCreateHandler, NriPodEvents } from './types.ts';

export interface PluginOptions {
  name: string;
  index: string;
  handler: NriCreateHandler;
  /** The owner watcher: fed by Synchronize, CreateContainer and StopPodSandbox. */
  pods?: NriPodEvents | undefined;
  log: Logger;
  /** Hears the session's results (the supervisor's status and metrics). */
  observer?: NriObserver | undefined;
  /** How long registration (RegisterPlugin, then the runtime's Configure) may take. */
  registrationTimeoutMs?: number;
  /** Synchronize answered: the runtime lists the plugin (session-state.ts). */
  onListed?: (() => void) | undefined;
}

export interface PluginSession {
  /** Resolves with what the runtime's Configure said once it configured the plugin; rejects if registration fails. */
  registered: Promise<RegisteredInfo>;
  /** Resolves with the reason when the socket is closed. */
  closed: Promise<string>;
  /** True once the socket is closed. */
  closedNow(): boolean;
  close(reason: string): void;
}

export function startPlugin(socket: Duplex, opts: PluginOptions): PluginSession {
  const { log, handler, pods } = opts;
  const mux = new MuxConnection(socket, log);
  let configured!: (info: RegisteredInfo) => void;
  const configuredP = new Promise<RegisteredInfo>((resolve) => (configured = resolve));
  const listed = () => opts.onListed?.();
  const state = newSessionState({ log, handler, pods, observer: opts.observer ?? silentObserver, configured, listed });
  new TtrpcServer(mux.open(PLUGIN_CONN), { [PLUGIN_SERVICE]: PLUGIN_CALLS }, { context: state, describe: statusLine });

  const runtime = new TtrpcClient(mux.open(RUNTIME_CONN));
  void mux.closed.then((reason) => runtime.abort(reason)); // closed only ever resolves
  const registered = register(mux, runtime, opts, configuredP);
  // A caller that only awaits `closed` must not see an unhandled rejection.
  registered.catch(() => {});
  return { registered, closed: mux.closed, closedNow: () => mux.isClosed, close: (reason) => mux.close(reason) };
}

/** RegisterPlugin, then the runtime's Configure, within the registration timeout; a failure closes the connection. */
async function register(mux: MuxConnection, runtime: TtrpcClient, opts: PluginOptions, configured: Promise<RegisteredInfo>) {
  const timeoutMs = opts.registrationTimeoutMs ?? 5000;
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`registration not completed within ${timeoutMs} ms`)), timeoutMs);
  });
  const closed = mux.closed.then((reason) => Promise.reject(new Error(`connection closed during registration (${reason})`)));
  try {
    const request = encode(Msg.RegisterPluginRequest, { pluginName: opts.name, pluginIdx: opts.index, NRIVersion: NRI_API_VERSION });
    const registering = runtime.call(RUNTIME_SERVICE, 'RegisterPlugin', request, timeoutMs);
    return await Promise.race([registering.then(() => configured), deadline, closed]);
  } catch (err) {
    mux.close(`registration failed: ${err instanceof Error ? err.message : 'error'}`);
    throw err;
  } finally {
    clearTimeout(timer);
  }
}
