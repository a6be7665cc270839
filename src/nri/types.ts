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

export interface NriCreateRequest {
  pod: {
    id: string;
    name: string;
    namespace: string;
    /** The pod's UID as the runtime knows it (trusted: NRI's own field). */
    uid: string;
    /** Every pod annotation (NRI passes them all). */
    annotations: Record<string, string>;
  };
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

/** The handler the plugin calls at CreateContainer; a thrown error fails the create with its message. */
export type NriCreateHandler = (request: NriCreateRequest) => NriAdjustment | Promise<NriAdjustment>;

export const EMPTY_ADJUSTMENT: NriAdjustment = Object.freeze({ env: [], removeEnv: [], annotations: {} }) as NriAdjustment;
