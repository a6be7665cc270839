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
    // The pods and containers of a Synchronize are not read: envhook changes nothing there.
    SynchronizeRequest: [{ name: 'more', number: 3, type: 'bool' }],
    SynchronizeResponse: [{ name: 'more', number: 2, type: 'bool' }],
    CreateContainerRequest: [
      { name: 'pod', number: 1, type: `${N}.PodSandbox` },
      { name: 'container', number: 2, type: `${N}.Container` },
    ],
    CreateContainerResponse: [{ name: 'adjust', number: 1, type: `${N}.ContainerAdjustment` }],
    PodSandbox: [
      { name: 'id', number: 1, type: 'string' },
      { name: 'name', number: 2, type: 'string' },
      { name: 'uid', number: 3, type: 'string' },
      { name: 'namespace', number: 4, type: 'string' },
      { name: 'annotations', number: 6, type: 'map' },
    ],
    Container: [
      { name: 'id', number: 1, type: 'string' },
      { name: 'pod_sandbox_id', number: 2, type: 'string' },
      { name: 'name', number: 3, type: 'string' },
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

/** NRI's Event enum value for CreateContainer; a plugin subscribes with bit (event - 1). */
export const EVENT_CREATE_CONTAINER = 4;
export const eventMask = (...events: number[]): number => events.reduce((m, e) => m | (1 << (e - 1)), 0);
