// One plugin session on one NRI socket: register with the runtime, answer Configure (subscribe
// to CreateContainer, and to StopPodSandbox when an owner watcher listens), Synchronize (no
// container changed; its pods and containers go to the watcher) and Shutdown, and turn each
// CreateContainer into a handler call. Pod ends come as NRI 0.12's dedicated StopPodSandbox
// (RemovePodSandbox) or, from an older runtime, as StateChange. The session ends when the
// socket closes, for whatever reason; `closed` says why (the daemon loop decides whether to
// reconnect). Containers Synchronize shows were created while envhook was away go to the
// observer (missed.ts), and so, on a runtime without NRI's sync block (sync-block.ts), does a
// container whose PostCreateContainer shows it was not adjusted: its create went to the plugin
// that was gone while this one registered, and it reached the runtime's store only after this
// plugin's Synchronize. Evicting them is the worker's, over CRI (evict.ts).
import type { Duplex } from 'node:stream';
import { describeError, EnvhookError } from '../errors.ts';
import type { Logger } from '../log.ts';
import { fromAdjustment, toCreateRequest, toPod, toSyncContainer } from './wire/plain-data.ts';
import {
  decode,
  encode,
  Msg,
  type ConfigureRequestShape,
  type CreateContainerRequestShape,
  type ContainerRequestShape,
  type ContainerShape,
  type PodSandboxRequestShape,
  type PodSandboxShape,
  type StateChangeEventShape,
  type SynchronizeRequestShape,
} from './wire/descriptors.ts';
import { PLUGIN_CONN, RUNTIME_CONN } from './wire/frames.ts';
import { findMissed } from './missed.ts';
import { needsPostCreateCheck } from './sync-block.ts';
import { MuxConnection } from './wire/mux.ts';
import { silentObserver, type NriObserver, type RegisteredInfo, type RequestResult } from './observer.ts';
import {
  EVENT_CREATE_CONTAINER,
  EVENT_POST_CREATE_CONTAINER,
  EVENT_REMOVE_POD_SANDBOX,
  EVENT_STOP_POD_SANDBOX,
  eventMask,
  NRI_API_VERSION,
  PLUGIN_SERVICE,
  RUNTIME_SERVICE,
} from './wire/nri-schema.ts';
import { TtrpcClient, TtrpcServer } from './wire/ttrpc.ts';
import type { NriPod } from '../facts/nri-facts.ts';
import { EMPTY_ADJUSTMENT } from '../apply/nri-adjustment.ts';
import type { NriCreateHandler, NriPodEvents } from './types.ts';
import type { NriSyncContainer } from './wire/plain-data.ts';

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
}

export interface PluginSession {
  /** Resolves with what the runtime's Configure said once it configured the plugin; rejects if registration fails. */
  registered: Promise<RegisteredInfo>;
  /** Resolves with the reason when the socket is closed. */
  closed: Promise<string>;
  close(reason: string): void;
}

/** NRI's default plugin_request_timeout, when the runtime's Configure gives none. */
const DEFAULT_REQUEST_TIMEOUT_MS = 2000;

/** The status message of a failed call: envhook's one line, as the CLI prints it. */
const statusLine = (err: unknown): string => `envhook: ${describeError(err)}`;

/**
 * CreateContainer always; PostCreateContainer on a runtime without the sync block (a container
 * created without envhook that no Synchronize lists, seen once it exists); StopPodSandbox only
 * when a watcher listens, to end the pod's watches when its containers are gone.
 * RemovePodSandbox is not needed: the kubelet stops a sandbox before it removes it, and a stop
 * missed while disconnected shows in the next Synchronize.
 */
const subscribedEvents = (watching: boolean, postCreate: boolean): number =>
  eventMask(EVENT_CREATE_CONTAINER, ...(postCreate ? [EVENT_POST_CREATE_CONTAINER] : []), ...(watching ? [EVENT_STOP_POD_SANDBOX] : []));

/** The containers this session adjusted, whose PostCreateContainer needs no check (bounded). */
const ADJUSTED_MEMORY = 4096;

export function startPlugin(socket: Duplex, opts: PluginOptions): PluginSession {
  const { log, handler, pods } = opts;
  const observer = opts.observer ?? silentObserver;
  const mux = new MuxConnection(socket, log);
  let syncPods: NriPod[] = [];
  let syncContainers: NriSyncContainer[] = [];
  // The watcher's contract is not to throw; should it, the call is still answered.
  const notify = (call: string, fn: () => void): void => {
    try {
      fn();
    } catch (err) {
      log.error({ err, call }, 'owner watcher failed');
    }
  };
  const timeoutMs = opts.registrationTimeoutMs ?? 5000;
  let configured!: (info: RegisteredInfo) => void;
  const configuredP = new Promise<RegisteredInfo>((resolve) => (configured = resolve));
  // Set by Configure: the runtime drops a plugin that has not answered within it.
  let requestTimeoutMs = 0;
  const podEnded = (call: string, pod: PodSandboxShape | undefined, ended: 'stop' | 'remove'): void => {
    if (pods) notify(call, () => pods.podEnded(toPod(pod), ended));
  };
  // Set by Configure: the runtime has no sync block, PostCreateContainer is taken (sync-block.ts).
  let postCreate = false;
  // Containers whose CreateContainer this session answered, kept only while PostCreateContainer
  // is taken: their PostCreateContainer is skipped.
  const adjusted = new Set<string>();
  /** A container the runtime just created: without envhook's mark for what its pod asks, it was missed. */
  const postCreated = (pod: PodSandboxShape | undefined, container: ContainerShape | undefined): void => {
    if (!pod || !container || adjusted.delete(container.id)) return;
    const missed = findMissed([toPod(pod)], [toSyncContainer(container)]);
    if (missed.length > 0) observer.missed(missed);
  };

  new TtrpcServer(
    mux.open(PLUGIN_CONN),
    {
      [`${PLUGIN_SERVICE}/Configure`]: (payload) => {
        const req = decode<ConfigureRequestShape>(Msg.ConfigureRequest, payload);
        const nriVersion = req.NRIVersion || undefined;
        log.debug(
          { runtime: req.runtimeName, version: req.runtimeVersion, nriVersion, requestTimeoutMs: Number(req.requestTimeout) },
          'NRI configure',
        );
        requestTimeoutMs = Number(req.requestTimeout);
        configured({ runtimeName: req.runtimeName, runtimeVersion: req.runtimeVersion, nriVersion });
        postCreate = needsPostCreateCheck(req.runtimeName, req.runtimeVersion);
        return encode(Msg.ConfigureResponse, { events: subscribedEvents(pods !== undefined, postCreate) });
      },
      [`${PLUGIN_SERVICE}/Synchronize`]: (payload) => {
        const req = decode<SynchronizeRequestShape>(Msg.SynchronizeRequest, payload);
        // A large state comes in parts (`more`), as NRI's stub collects them: the watcher gets the whole.
        syncPods.push(...req.pods.map(toPod));
        syncContainers.push(...req.containers.map(toSyncContainer));
        if (!req.more) {
          const [all, containers] = [syncPods, syncContainers];
          [syncPods, syncContainers] = [[], []];
          if (pods) notify('Synchronize', () => pods.synchronized(all, containers));
          const missed = findMissed(all, containers);
          if (missed.length > 0) observer.missed(missed);
        }
        return encode(Msg.SynchronizeResponse, { more: req.more });
      },
      [`${PLUGIN_SERVICE}/StateChange`]: (payload) => {
        const ev = decode<StateChangeEventShape>(Msg.StateChangeEvent, payload);
        const ended = ev.event === EVENT_STOP_POD_SANDBOX ? 'stop' : ev.event === EVENT_REMOVE_POD_SANDBOX ? 'remove' : undefined;
        if (ended) podEnded('StateChange', ev.pod, ended);
        if (ev.event === EVENT_POST_CREATE_CONTAINER) postCreated(ev.pod, ev.container);
        return encode(Msg.Empty, {});
      },
      [`${PLUGIN_SERVICE}/StopPodSandbox`]: (payload) => {
        podEnded('StopPodSandbox', decode<PodSandboxRequestShape>(Msg.StopPodSandboxRequest, payload).pod, 'stop');
        return encode(Msg.StopPodSandboxResponse, {});
      },
      [`${PLUGIN_SERVICE}/RemovePodSandbox`]: (payload) => {
        podEnded('RemovePodSandbox', decode<PodSandboxRequestShape>(Msg.RemovePodSandboxRequest, payload).pod, 'remove');
        return encode(Msg.RemovePodSandboxResponse, {});
      },
      [`${PLUGIN_SERVICE}/PostCreateContainer`]: (payload) => {
        const req = decode<ContainerRequestShape>(Msg.PostCreateContainerRequest, payload);
        postCreated(req.pod, req.container);
        return encode(Msg.PostCreateContainerResponse, {});
      },
      [`${PLUGIN_SERVICE}/Shutdown`]: () => {
        log.info('NRI shutdown requested by the runtime');
        return encode(Msg.Empty, {});
      },
      // The handler logs each adjustment and refusal itself (once, with the pod's names).
      [`${PLUGIN_SERVICE}/CreateContainer`]: async (payload) => {
        const request = toCreateRequest(decode<CreateContainerRequestShape>(Msg.CreateContainerRequest, payload));
        const started = process.hrtime.bigint();
        const seconds = () => Number(process.hrtime.bigint() - started) / 1e9;
        // Three quarters of the runtime's request timeout: an error answered in time, not silence.
        const deadline = started + BigInt(Math.floor((requestTimeoutMs || DEFAULT_REQUEST_TIMEOUT_MS) * 0.75)) * 1_000_000n;
        try {
          const adjustment = await handler(request, { deadline });
          if (postCreate) {
            if (adjusted.size >= ADJUSTED_MEMORY) adjusted.clear();
            adjusted.add(request.container.id);
          }
          observer.request(adjustment === EMPTY_ADJUSTMENT ? 'empty' : 'adjusted', seconds());
          if (pods) notify('CreateContainer', () => pods.created(request, adjustment));
          return encode(Msg.CreateContainerResponse, { adjust: fromAdjustment(adjustment) });
        } catch (err) {
          const result: RequestResult = err instanceof EnvhookError ? 'refused' : 'error';
          observer.request(result, seconds(), statusLine(err));
          throw err;
        }
      },
    },
    statusLine,
  );

  const runtime = new TtrpcClient(mux.open(RUNTIME_CONN));
  void mux.closed.then((reason) => runtime.abort(reason)); // closed only ever resolves

  const registered = (async () => {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`registration not completed within ${timeoutMs} ms`)), timeoutMs);
    });
    const closed = mux.closed.then((reason) => Promise.reject(new Error(`connection closed during registration (${reason})`)));
    try {
      const request = encode(Msg.RegisterPluginRequest, { pluginName: opts.name, pluginIdx: opts.index, NRIVersion: NRI_API_VERSION });
      const register = runtime.call(RUNTIME_SERVICE, 'RegisterPlugin', request, timeoutMs);
      return await Promise.race([register.then(() => configuredP), deadline, closed]);
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
