// The NRI, ttRPC and google.rpc messages envhook reads or writes, as our own table of facts
// (message names, field names, numbers and types as NRI's pkg/api/api.proto and ttRPC's
// request.proto define them). Only the fields envhook uses are listed: protobuf skips the rest
// on the wire, so a runtime that sends more is still understood. test/nri/wire/nri-schema.test.ts checks
// every field here against the api.proto of Debian's golang-github-containerd-nri-dev (NRI
// 0.8.0); what a later NRI added is marked with the release that added it (`since`), and the
// test checks that 0.8.0 has none of it, so a mark can be neither missing nor wrong that way.
//
// The table is turned into descriptors (descriptors.ts) that @bufbuild/protobuf encodes and
// decodes with, so what is checked is exactly what runs.

/** A field: name, number, type (a scalar, `map` for map<string,string>, or a message name). */
export interface FieldFact {
  name: string;
  number: number;
  type: 'string' | 'bytes' | 'bool' | 'int32' | 'uint32' | 'int64' | 'map' | `.${string}`;
  repeated?: boolean;
  /** The NRI release that added the field, when after Debian's 0.8.0. */
  since?: NriRelease;
}

/** An NRI release (a Go module version, as NRI's own code names them), later than 0.8.0. */
export type NriRelease = 'v0.12.0';

/** An RPC: its request and response messages (by name, in the same file), and `since`. */
export interface MethodFact {
  request: string;
  response: string;
  since?: NriRelease;
}

export interface FileFact {
  name: string;
  package: string;
  dependency: string[];
  messages: Record<string, FieldFact[]>;
  /** Enums by name: value name → number. A field whose type names one is an enum field. */
  enums?: Record<string, Record<string, number>>;
  /** Messages added after Debian's NRI 0.8.0, by the release that added them. */
  since?: Record<string, NriRelease>;
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
      // The plugin's NRI version, logged by the runtime ("with NRI version unknown" without it).
      { name: 'NRI_version', number: 3, type: 'string', since: 'v0.12.0' },
    ],
    ConfigureRequest: [
      { name: 'config', number: 1, type: 'string' },
      { name: 'runtime_name', number: 2, type: 'string' },
      { name: 'runtime_version', number: 3, type: 'string' },
      { name: 'registration_timeout', number: 4, type: 'int64' },
      { name: 'request_timeout', number: 5, type: 'int64' },
      { name: 'NRI_version', number: 6, type: 'string', since: 'v0.12.0' },
    ],
    ConfigureResponse: [{ name: 'events', number: 2, type: 'int32' }],
    // The running pods and containers: the owner watcher's starting point (nri/worker/pod-watch.ts).
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
    // NRI 0.12's dedicated pod RPCs (an older runtime sends StateChangeEvent instead).
    StopPodSandboxRequest: [{ name: 'pod', number: 1, type: `${N}.PodSandbox` }],
    StopPodSandboxResponse: [],
    RemovePodSandboxRequest: [{ name: 'pod', number: 1, type: `${N}.PodSandbox` }],
    RemovePodSandboxResponse: [],
    // NRI 0.12's dedicated container event (an older runtime sends StateChangeEvent instead).
    PostCreateContainerRequest: [
      { name: 'pod', number: 1, type: `${N}.PodSandbox` },
      { name: 'container', number: 2, type: `${N}.Container` },
    ],
    PostCreateContainerResponse: [],
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
      // Its namespaces: a user namespace means the kubelet's mounts are idmapped (plain-data.ts).
      { name: 'linux', number: 11, type: `${N}.LinuxContainer` },
      // Its process: `envhook status` tells a missed container that still runs from one that ended.
      { name: 'pid', number: 12, type: 'uint32' },
    ],
    LinuxContainer: [{ name: 'namespaces', number: 1, type: `${N}.LinuxNamespace`, repeated: true }],
    LinuxNamespace: [
      { name: 'type', number: 1, type: 'string' },
      { name: 'path', number: 2, type: 'string' },
    ],
    Mount: [
      { name: 'destination', number: 1, type: 'string' },
      { name: 'type', number: 2, type: 'string' },
      { name: 'source', number: 3, type: 'string' },
      { name: 'options', number: 4, type: 'string', repeated: true },
    ],
    ContainerAdjustment: [
      { name: 'annotations', number: 2, type: 'map' },
      // A mount for a destination the container has replaces that mount (owned copies).
      { name: 'mounts', number: 3, type: `${N}.Mount`, repeated: true },
      { name: 'env', number: 4, type: `${N}.KeyValue`, repeated: true },
    ],
    KeyValue: [
      { name: 'key', number: 1, type: 'string' },
      { name: 'value', number: 2, type: 'string' },
    ],
  },
  // Only the values envhook uses, and each enum's zero (proto3 requires it first).
  enums: {
    Event: { UNKNOWN: 0, STOP_POD_SANDBOX: 2, REMOVE_POD_SANDBOX: 3, CREATE_CONTAINER: 4, POST_CREATE_CONTAINER: 5 },
    ContainerState: { CONTAINER_UNKNOWN: 0, CONTAINER_STOPPED: 4 },
  },
  since: {
    StopPodSandboxRequest: 'v0.12.0',
    StopPodSandboxResponse: 'v0.12.0',
    RemovePodSandboxRequest: 'v0.12.0',
    RemovePodSandboxResponse: 'v0.12.0',
    PostCreateContainerRequest: 'v0.12.0',
    PostCreateContainerResponse: 'v0.12.0',
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

/** The Plugin methods envhook serves (any other is answered Unimplemented). */
export const PLUGIN_METHODS = {
  Configure: { request: 'ConfigureRequest', response: 'ConfigureResponse' },
  Synchronize: { request: 'SynchronizeRequest', response: 'SynchronizeResponse' },
  Shutdown: { request: 'Empty', response: 'Empty' },
  CreateContainer: { request: 'CreateContainerRequest', response: 'CreateContainerResponse' },
  // Pod events before NRI 0.12; a 0.12 runtime calls it only for a plugin that answers the
  // dedicated method below Unimplemented, and logs that plugin as using a deprecated interface.
  StateChange: { request: 'StateChangeEvent', response: 'Empty' },
  StopPodSandbox: { request: 'StopPodSandboxRequest', response: 'StopPodSandboxResponse', since: 'v0.12.0' },
  RemovePodSandbox: { request: 'RemovePodSandboxRequest', response: 'RemovePodSandboxResponse', since: 'v0.12.0' },
  PostCreateContainer: { request: 'PostCreateContainerRequest', response: 'PostCreateContainerResponse', since: 'v0.12.0' },
} as const satisfies Record<string, MethodFact>;

/** A Plugin method's name: the worker's method table has one function for each (worker/methods.ts). */
export type NriMethod = keyof typeof PLUGIN_METHODS;

/** The Runtime methods envhook calls. */
export const RUNTIME_METHODS = {
  RegisterPlugin: { request: 'RegisterPluginRequest', response: 'Empty' },
} as const satisfies Record<string, MethodFact>;

/**
 * The NRI version envhook sends in RegisterPlugin, written as NRI's Go stub writes its own (the
 * NRI module's version). envhook is not built on NRI's module: it claims the newest protocol
 * release whose messages it implements as far as it uses them, v0.12.0 (the dedicated pod RPCs
 * and both NRI_version fields came with it; v0.12.1 and v0.12.2 changed no message envhook
 * uses, but envhook does not claim what they added). The runtime only logs it.
 */
export const NRI_API_VERSION: NriRelease = 'v0.12.0';

/** NRI's Event enum values envhook uses; a plugin subscribes with bit (event - 1). */
const EVENT = NRI_FILE.enums!.Event!;
export const EVENT_CREATE_CONTAINER = EVENT.CREATE_CONTAINER!;
export const EVENT_STOP_POD_SANDBOX = EVENT.STOP_POD_SANDBOX!;
export const EVENT_REMOVE_POD_SANDBOX = EVENT.REMOVE_POD_SANDBOX!;
export const EVENT_POST_CREATE_CONTAINER = EVENT.POST_CREATE_CONTAINER!;
/** A container of a Synchronize in this state has exited: its pod is not kept watched for it. */
export const CONTAINER_STOPPED = NRI_FILE.enums!.ContainerState!.CONTAINER_STOPPED!;
export const eventMask = (...events: number[]): number => events.reduce((m, e) => m | (1 << (e - 1)), 0);
