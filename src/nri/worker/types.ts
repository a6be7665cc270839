// What the plugin session (plugin.ts) calls: CreateContainer's handler and the owner watcher's
// pod events, with plain data only, no protobuf types, so each side is built and tested alone.
// The session turns a CreateContainer request into facts' NriCreateRequest (facts/nri-facts.ts),
// calls the handler, and turns its NriAdjustment (apply/nri-adjustment.ts) or its thrown
// EnvhookError into the response.
import type { NriCreateRequest, NriPod } from '../../facts/nri-facts.ts';
import type { NriSyncContainer } from '../wire/plain-data.ts';
import type { NriAdjustment } from '../../apply/nri-adjustment.ts';

/** The runtime handler `envhook install --runtime containerd` registers (the guard): its pods' env is the runtime front's. */
export const GUARD_HANDLER = 'envhook';

/**
 * What the plugin tells the resident owner watcher (nri/worker/pod-watch.ts), beside CreateContainer's
 * handler. Called in the plugin's turn: each must return quickly and never throw.
 */
export interface NriPodEvents {
  /**
   * The runtime's pods and containers, on every (re)connect (all parts of a Synchronize). Work that
   * grows with the pods goes on after the call, in slices of the loop; the promise says when it is done.
   */
  synchronized(pods: readonly NriPod[], containers: readonly NriSyncContainer[]): void | Promise<void>;
  /** A container was created with the handler's changes (its owners chowned or copied; the adjustment points mounts at copies). */
  created(request: NriCreateRequest, adjustment?: NriAdjustment): void;
  /** StopPodSandbox or RemovePodSandbox. */
  podEnded(pod: NriPod, event: 'stop' | 'remove'): void;
}

/** What the session adds to a request: the time by which the answer must be on its way. */
export interface NriCallContext {
  /** process.hrtime.bigint() past which long work (the chown) gives up with an error. */
  deadline?: bigint | undefined;
}

/**
 * The empty adjustment of a container the other envhook nri claimed during a hand-over
 * (claims.ts): that one adjusts it and watches its pod; this one only counts it.
 */
export const ANSWERED_ELSEWHERE: NriAdjustment = Object.freeze({ env: [], removeEnv: [], annotations: {} }) as NriAdjustment;

/** The handler the plugin calls at CreateContainer; a thrown error fails the create with its message. */
export type NriCreateHandler = (request: NriCreateRequest, context?: NriCallContext) => NriAdjustment | Promise<NriAdjustment>;
