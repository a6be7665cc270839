// One plugin session on one NRI socket: register with the runtime, answer Configure (subscribe
// to CreateContainer only), Synchronize (nothing to change) and Shutdown, and turn each
// CreateContainer into a handler call. The session ends when the socket closes, for whatever
// reason; `closed` says why (the daemon loop decides whether to reconnect).
import type { Duplex } from 'node:stream';
import { describeError } from '../errors.ts';
import type { Logger } from '../log.ts';
import { fromAdjustment, toCreateRequest } from './convert.ts';
import { decode, encode, Msg, type ConfigureRequestShape, type CreateContainerRequestShape, type SynchronizeRequestShape } from './descriptors.ts';
import { PLUGIN_CONN, RUNTIME_CONN } from './frames.ts';
import { MuxConnection } from './mux.ts';
import { EVENT_CREATE_CONTAINER, eventMask, PLUGIN_SERVICE, RUNTIME_SERVICE } from './schema.ts';
import { TtrpcClient, TtrpcServer } from './ttrpc.ts';
import type { NriCreateHandler } from './types.ts';

export interface PluginOptions {
  name: string;
  index: string;
  handler: NriCreateHandler;
  log: Logger;
  /** How long registration (RegisterPlugin, then the runtime's Configure) may take. */
  registrationTimeoutMs?: number;
}

export interface PluginSession {
  /** Resolves once the runtime has configured the plugin; rejects if registration fails. */
  registered: Promise<void>;
  /** Resolves with the reason when the socket is closed. */
  closed: Promise<string>;
  close(reason: string): void;
}

/** The status message of a failed call: envhook's one line, as the CLI prints it. */
const statusLine = (err: unknown): string => `envhook: ${describeError(err)}`;

export function startPlugin(socket: Duplex, opts: PluginOptions): PluginSession {
  const { log, handler } = opts;
  const mux = new MuxConnection(socket, log);
  const timeoutMs = opts.registrationTimeoutMs ?? 5000;
  let configured!: () => void;
  const configuredP = new Promise<void>((resolve) => (configured = resolve));

  new TtrpcServer(
    mux.open(PLUGIN_CONN),
    {
      [`${PLUGIN_SERVICE}/Configure`]: (payload) => {
        const req = decode<ConfigureRequestShape>(Msg.ConfigureRequest, payload);
        log.info({ runtime: req.runtimeName, version: req.runtimeVersion, requestTimeoutMs: Number(req.requestTimeout) }, 'NRI configure');
        configured();
        return encode(Msg.ConfigureResponse, { events: eventMask(EVENT_CREATE_CONTAINER) });
      },
      [`${PLUGIN_SERVICE}/Synchronize`]: (payload) => {
        const req = decode<SynchronizeRequestShape>(Msg.SynchronizeRequest, payload);
        return encode(Msg.SynchronizeResponse, { more: req.more });
      },
      [`${PLUGIN_SERVICE}/Shutdown`]: () => {
        log.info('NRI shutdown requested by the runtime');
        return encode(Msg.Empty, {});
      },
      [`${PLUGIN_SERVICE}/CreateContainer`]: async (payload) => {
        const request = toCreateRequest(decode<CreateContainerRequestShape>(Msg.CreateContainerRequest, payload));
        try {
          const adjustment = await handler(request);
          return encode(Msg.CreateContainerResponse, { adjust: fromAdjustment(adjustment) });
        } catch (err) {
          log.warn({ err, container: request.container.name, pod: request.pod.name, namespace: request.pod.namespace }, 'CreateContainer failed');
          throw err;
        }
      },
    },
    statusLine,
  );

  const runtime = new TtrpcClient(mux.open(RUNTIME_CONN));
  mux.closed.then((reason) => runtime.abort(reason));

  const registered = (async () => {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`registration not completed within ${timeoutMs} ms`)), timeoutMs);
    });
    const closed = mux.closed.then((reason) => Promise.reject(new Error(`connection closed during registration (${reason})`)));
    try {
      const register = runtime.call(RUNTIME_SERVICE, 'RegisterPlugin', encode(Msg.RegisterPluginRequest, { pluginName: opts.name, pluginIdx: opts.index }), timeoutMs);
      await Promise.race([register.then(() => configuredP), deadline, closed]);
      log.info({ plugin: `${opts.index}-${opts.name}` }, 'NRI plugin registered');
    } catch (err) {
      mux.close(`registration failed: ${err instanceof Error ? err.message : 'error'}`);
      throw err;
    } finally {
      clearTimeout(timer);
    }
  })();
  // A caller that only awaits `closed` must not see an unhandled rejection.
  registered.catch(() => {});

  return { registered, closed: mux.closed, close: (reason) => mux.close(reason) };
}
