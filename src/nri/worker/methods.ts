// The Plugin methods envhook serves, one function each, in one typed table: the session's ttRPC
// server (plugin.ts) answers a Request for NRI's Plugin service from PLUGIN_CALLS by its method
// name, with the session's state (session-state.ts); any other name is answered Unimplemented.
// Each decodes its request (wire/descriptors.ts), turns it into plain data (wire/plain-data.ts),
// does its part and encodes its response. Pod ends come as NRI 0.12's dedicated StopPodSandbox
// (RemovePodSandbox) or, from an older runtime, as StateChange. Containers Synchronize shows were
// created while envhook was away go to the observer (missed.ts), and so, on a runtime without
// NRI's sync block (sync-block.ts), does a container whose PostCreateContainer shows it was not
// adjusted: its create went to the plugin that was gone while this one registered, and it
// reached the runtime's store only after this plugin's Synchronize.
import {
  decode,
  encode,
  Msg,
  type ConfigureRequestShape,
  type ContainerRequestShape,
  type ContainerShape,
  type PodSandboxRequestShape,
  type PodSandboxShape,
  type StateChangeEventShape,
  type SynchronizeRequestShape,
} from '../wire/descriptors.ts';
import {
  EVENT_CREATE_CONTAINER,
  EVENT_POST_CREATE_CONTAINER,
  EVENT_REMOVE_POD_SANDBOX,
  EVENT_STOP_POD_SANDBOX,
  eventMask,
  type NriMethod,
} from '../wire/nri-schema.ts';
import { toPod, toSyncContainer } from '../wire/plain-data.ts';
import type { Method } from '../wire/ttrpc.ts';
import { createContainer } from './create-container.ts';
import { findMissed } from './missed.ts';
import { notifyPods, type SessionState } from './session-state.ts';
import { needsPostCreateCheck } from './sync-block.ts';

export const PLUGIN_CALLS = {
  Configure: configure,
  Synchronize: synchronize,
  Shutdown: shutdown,
  CreateContainer: createContainer,
  StateChange: stateChange,
  StopPodSandbox: stopPodSandbox,
  RemovePodSandbox: removePodSandbox,
  PostCreateContainer: postCreateContainer,
} as const satisfies Record<NriMethod, Method<SessionState>>;

/**
 * CreateContainer always; PostCreateContainer on a runtime without the sync block (a container
 * created without envhook that no Synchronize lists, seen once it exists); StopPodSandbox only
 * when a watcher listens, to end the pod's watches when its containers are gone.
 * RemovePodSandbox is not needed: the kubelet stops a sandbox before it removes it, and a stop
 * missed while disconnected shows in the next Synchronize.
 */
const subscribedEvents = (watching: boolean, postCreate: boolean): number =>
  eventMask(EVENT_CREATE_CONTAINER, ...(postCreate ? [EVENT_POST_CREATE_CONTAINER] : []), ...(watching ? [EVENT_STOP_POD_SANDBOX] : []));

function configure(payload: Buffer, s: SessionState): Uint8Array {
  const req = decode<ConfigureRequestShape>(Msg.ConfigureRequest, payload);
  const nriVersion = req.NRIVersion || undefined;
  s.log.debug(
    { runtime: req.runtimeName, version: req.runtimeVersion, nriVersion, requestTimeoutMs: Number(req.requestTimeout) },
    'NRI configure',
  );
  s.requestTimeoutMs = Number(req.requestTimeout);
  s.configured({ runtimeName: req.runtimeName, runtimeVersion: req.runtimeVersion, nriVersion });
  s.postCreate = needsPostCreateCheck(req.runtimeName, req.runtimeVersion);
  return encode(Msg.ConfigureResponse, { events: subscribedEvents(s.pods !== undefined, s.postCreate) });
}

function synchronize(payload: Buffer, s: SessionState): Uint8Array {
  const req = decode<SynchronizeRequestShape>(Msg.SynchronizeRequest, payload);
  // A large state comes in parts (`more`), as NRI's stub collects them: the watcher gets the whole.
  s.syncPods.push(...req.pods.map(toPod));
  s.syncContainers.push(...req.containers.map(toSyncContainer));
  if (!req.more) {
    const [all, containers] = [s.syncPods, s.syncContainers];
    [s.syncPods, s.syncContainers] = [[], []];
    notifyPods(s, 'Synchronize', (pods) => void pods.synchronized(all, containers));
    // all of them, none included: those of before that are no longer listed have ended
    s.observer.missed(findMissed(all, containers), true);
    // After this turn: the response is written first.
    setImmediate(s.listed);
  }
  return encode(Msg.SynchronizeResponse, { more: req.more });
}

function shutdown(_payload: Buffer, s: SessionState): Uint8Array {
  s.log.info('NRI shutdown requested by the runtime');
  return encode(Msg.Empty, {});
}

function stateChange(payload: Buffer, s: SessionState): Uint8Array {
  const ev = decode<StateChangeEventShape>(Msg.StateChangeEvent, payload);
  const ended = ev.event === EVENT_STOP_POD_SANDBOX ? 'stop' : ev.event === EVENT_REMOVE_POD_SANDBOX ? 'remove' : undefined;
  if (ended) podEnded(s, 'StateChange', ev.pod, ended);
  if (ev.event === EVENT_POST_CREATE_CONTAINER) postCreated(s, ev.pod, ev.container);
  return encode(Msg.Empty, {});
}

function stopPodSandbox(payload: Buffer, s: SessionState): Uint8Array {
  podEnded(s, 'StopPodSandbox', decode<PodSandboxRequestShape>(Msg.StopPodSandboxRequest, payload).pod, 'stop');
  return encode(Msg.StopPodSandboxResponse, {});
}

function removePodSandbox(payload: Buffer, s: SessionState): Uint8Array {
  podEnded(s, 'RemovePodSandbox', decode<PodSandboxRequestShape>(Msg.RemovePodSandboxRequest, payload).pod, 'remove');
  return encode(Msg.RemovePodSandboxResponse, {});
}

function postCreateContainer(payload: Buffer, s: SessionState): Uint8Array {
  const req = decode<ContainerRequestShape>(Msg.PostCreateContainerRequest, payload);
  postCreated(s, req.pod, req.container);
  return encode(Msg.PostCreateContainerResponse, {});
}

function podEnded(s: SessionState, call: string, pod: PodSandboxShape | undefined, ended: 'stop' | 'remove'): void {
  notifyPods(s, call, (pods) => pods.podEnded(toPod(pod), ended));
}

/** A container the runtime just created: without envhook's mark for what its pod asks, it was missed. */
function postCreated(s: SessionState, pod: PodSandboxShape | undefined, container: ContainerShape | undefined): void {
  if (!pod || !container || s.adjusted.delete(container.id)) return;
  const missed = findMissed([toPod(pod)], [toSyncContainer(container)]);
  if (missed.length > 0) s.observer.missed(missed, false);
}
