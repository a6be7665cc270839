// The boundary between NRI's protocol layer (ttRPC, messages, the plugin's connection) and
// envhook's pipeline: plain data, no protobuf types, so each side is built and tested alone.
// The protocol layer turns a CreateContainer request into an NriCreateRequest, calls the
// handler, and turns its NriAdjustment (or its thrown EnvhookError) into the response.

export interface NriMount {
  destination: string;
  source: string;
  type: string;
  options: string[];
}

export interface NriIdMapping {
  containerId: number;
  hostId: number;
  size: number;
}

/** A pod sandbox as NRI describes it (CreateContainer, Synchronize, pod events). */
export interface NriPod {
  /** The sandbox's id: a pod whose sandbox is replaced keeps its UID and gets a new id. */
  id: string;
  name: string;
  namespace: string;
  /** The pod's UID as the runtime knows it (trusted: NRI's own field). */
  uid: string;
  /** Every pod annotation (NRI passes them all). */
  annotations: Record<string, string>;
  /** The CRI runtime handler the pod runs under ('' for the runtime's default). */
  runtimeHandler?: string | undefined;
}

export interface NriCreateRequest {
  pod: NriPod;
  container: {
    id: string;
    /** The container's name in the pod (trusted: NRI's own field). */
    name: string;
    annotations: Record<string, string>;
    /** The process env the runtime built, `NAME=value` entries in order. */
    env: string[];
    mounts: NriMount[];
    /** The container's user-namespace UID mappings, when it has one. */
    uidMappings?: NriIdMapping[] | undefined;
  };
}

export interface NriAdjustment {
  /** Variables to add or replace, in order. */
  env: { key: string; value: string }[];
  /** Variable names to remove from the container's env. */
  removeEnv: string[];
  /** Annotations to add or replace on the container. */
  annotations: Record<string, string>;
}

/** A container of a Synchronize: what the owner watcher and the missed-container check read. */
export interface NriSyncContainer {
  id: string;
  name: string;
  podSandboxId: string;
  /** The container's annotations as the runtime stored them (envhook's applied mark among them). */
  annotations: Record<string, string>;
  /** NRI's ContainerState number (schema.ts: CONTAINER_STOPPED). */
  state: number;
  mounts: NriMount[];
}

/**
 * What the plugin tells the resident owner watcher (nri/pod-watch.ts), beside CreateContainer's
 * handler. Called in the plugin's turn: each must return quickly and never throw.
 */
export interface NriPodEvents {
  /** The runtime's pods and containers, on every (re)connect (all parts of a Synchronize). */
  synchronized(pods: readonly NriPod[], containers: readonly NriSyncContainer[]): void;
  /** A container was created with the handler's changes (its owners chowned). */
  created(request: NriCreateRequest): void;
  /** StopPodSandbox or RemovePodSandbox. */
  podEnded(pod: NriPod, event: 'stop' | 'remove'): void;
}

/** What the session adds to a request: the time by which the answer must be on its way. */
export interface NriCallContext {
  /** process.hrtime.bigint() past which long work (the chown) gives up with an error. */
  deadline?: bigint | undefined;
}

/** The handler the plugin calls at CreateContainer; a thrown error fails the create with its message. */
export type NriCreateHandler = (request: NriCreateRequest, context?: NriCallContext) => NriAdjustment | Promise<NriAdjustment>;

export const EMPTY_ADJUSTMENT: NriAdjustment = Object.freeze({ env: [], removeEnv: [], annotations: {} }) as NriAdjustment;
