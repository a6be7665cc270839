// The NRI, ttRPC and google.rpc messages envhook reads or writes, as our own table of facts
// (message names, field names, numbers and types as NRI 0.8.0's pkg/api/api.proto and ttRPC's
// request.proto define them). Only the fields envhook uses are listed: protobuf skips the rest
// on the wire, so a runtime that sends more is still understood. test/nri/schema.test.ts checks
// every field here against the api.proto of Debian's golang-github-containerd-nri-dev.
//
// The table is turned into descriptors (descriptors.ts) that @bufbuild/protobuf encodes and
// decodes with, so what is checked is exactly what runs.

/** A field: name, number, type (a scalar, `map` for map<string,string>, or a message name). */
export interface FieldFact {
  name: string;
  number: number;
  type: 'string' | 'bytes' | 'bool' | 'int32' | 'int64' | 'map' | `.${string}`;
  repeated?: boolean;
}

export interface FileFact {
  name: string;
  package: string;
  dependency: string[];
  messages: Record<string, FieldFact[]>;
  /** Enums by name: value name → number. A field whose type names one is an enum field. */
  enums?: Record<string, Record<string, number>>;
}

export const NRI_PACKAGE = 'nri.pkg.api.v1alpha1';
const N = `.${NRI_PACKAGE}`;

export const NRI_FILE: FileFact = {
  name: 'envhook/nri/api.proto',
  package: NRI_PACKAGE,
  dependency: [],
  messages: {
    Empty: [],
    RegisterPluginRequest: [
      { name: 'plugin_name', number: 1, type: 'string' },
      { name: 'plugin_idx', number: 2, type: 'string' },
    ],
    ConfigureRequest: [
      { name: 'config', number: 1, type: 'string' },
      { name: 'runtime_name', number: 2, type: 'string' },
      { name: 'runtime_version', number: 3, type: 'string' },
      { name: 'registration_timeout', number: 4, type: 'int64' },
      { name: 'request_timeout', number: 5, type: 'int64' },
    ],
    ConfigureResponse: [{ name: 'events', number: 2, type: 'int32' }],
    // The running pods and containers: the owner watcher's starting point (nri/pod-watch.ts).
    SynchronizeRequest: [
      { name: 'pods', number: 1, type: `${N}.PodSandbox`, repeated: true },
      { name: 'containers', number: 2, type: `${N}.Container`, repeated: true },
      { name: 'more', number: 3, type: 'bool' },
    ],
    SynchronizeResponse: [{ name: 'more', number: 2, type: 'bool' }],
    CreateContainerRequest: [
      { name: 'pod', number: 1, type: `${N}.PodSandbox` },
      { name: 'container', number: 2, type: `${N}.Container` },
    ],
    CreateContainerResponse: [{ name: 'adjust', number: 1, type: `${N}.ContainerAdjustment` }],
    // Pod events (StopPodSandbox, RemovePodSandbox): the pod's owner watches end.
    StateChangeEvent: [
      { name: 'event', number: 1, type: `${N}.Event` },
      { name: 'pod', number: 2, type: `${N}.PodSandbox` },
      { name: 'container', number: 3, type: `${N}.Container` },
    ],
    PodSandbox: [
      { name: 'id', number: 1, type: 'string' },
      { name: 'name', number: 2, type: 'string' },
      { name: 'uid', number: 3, type: 'string' },
      { name: 'namespace', number: 4, type: 'string' },
      { name: 'annotations', number: 6, type: 'map' },
      { name: 'runtime_handler', number: 7, type: 'string' },
    ],
    Container: [
      { name: 'id', number: 1, type: 'string' },
      { name: 'pod_sandbox_id', number: 2, type: 'string' },
      { name: 'name', number: 3, type: 'string' },
      { name: 'state', number: 4, type: `${N}.ContainerState` },
      { name: 'annotations', number: 6, type: 'map' },
      { name: 'env', number: 8, type: 'string', repeated: true },
      { name: 'mounts', number: 9, type: `${N}.Mount`, repeated: true },
    ],
    Mount: [
      { name: 'destination', number: 1, type: 'string' },
      { name: 'type', number: 2, type: 'string' },
      { name: 'source', number: 3, type: 'string' },
      { name: 'options', number: 4, type: 'string', repeated: true },
    ],
    ContainerAdjustment: [
      { name: 'annotations', number: 2, type: 'map' },
      { name: 'env', number: 4, type: `${N}.KeyValue`, repeated: true },
    ],
    KeyValue: [
      { name: 'key', number: 1, type: 'string' },
      { name: 'value', number: 2, type: 'string' },
    ],
  },
  // Only the values envhook uses, and each enum's zero (proto3 requires it first).
  enums: {
    Event: { UNKNOWN: 0, STOP_POD_SANDBOX: 2, REMOVE_POD_SANDBOX: 3, CREATE_CONTAINER: 4 },
    ContainerState: { CONTAINER_UNKNOWN: 0, CONTAINER_STOPPED: 4 },
  },
};

export const STATUS_FILE: FileFact = {
  name: 'envhook/google/rpc/status.proto',
  package: 'google.rpc',
  dependency: [],
  // `details` (3, repeated Any) is never sent by envhook and never read.
  messages: {
    Status: [
      { name: 'code', number: 1, type: 'int32' },
      { name: 'message', number: 2, type: 'string' },
    ],
  },
};

export const TTRPC_FILE: FileFact = {
  name: 'envhook/ttrpc/request.proto',
  package: 'ttrpc',
  dependency: [STATUS_FILE.name],
  messages: {
    Request: [
      { name: 'service', number: 1, type: 'string' },
      { name: 'method', number: 2, type: 'string' },
      { name: 'payload', number: 3, type: 'bytes' },
      { name: 'timeout_nano', number: 4, type: 'int64' },
      { name: 'metadata', number: 5, type: '.ttrpc.KeyValue', repeated: true },
    ],
    Response: [
      { name: 'status', number: 1, type: '.google.rpc.Status' },
      { name: 'payload', number: 2, type: 'bytes' },
    ],
    KeyValue: [
      { name: 'key', number: 1, type: 'string' },
      { name: 'value', number: 2, type: 'string' },
    ],
  },
};

/** NRI's services as the runtime and the plugin name them in a ttRPC Request. */
export const PLUGIN_SERVICE = `${NRI_PACKAGE}.Plugin`;
export const RUNTIME_SERVICE = `${NRI_PACKAGE}.Runtime`;

/** NRI's Event enum values envhook uses; a plugin subscribes with bit (event - 1). */
const EVENT = NRI_FILE.enums!.Event!;
export const EVENT_CREATE_CONTAINER = EVENT.CREATE_CONTAINER!;
export const EVENT_STOP_POD_SANDBOX = EVENT.STOP_POD_SANDBOX!;
export const EVENT_REMOVE_POD_SANDBOX = EVENT.REMOVE_POD_SANDBOX!;
/** A container of a Synchronize in this state has exited: its pod is not kept watched for it. */
export const CONTAINER_STOPPED = NRI_FILE.enums!.ContainerState!.CONTAINER_STOPPED!;
export const eventMask = (...events: number[]): number => events.reduce((m, e) => m | (1 << (e - 1)), 0);
