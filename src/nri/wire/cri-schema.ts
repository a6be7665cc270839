// The CRI calls envhook makes, as our own table of facts: cri-api's runtime.v1
// RuntimeService/StopContainer and Version (whose runtime a socket is), their requests and responses (message names, field names, numbers
// and types as cri-api's api.proto defines them). test/nri/wire/cri-client.test.ts checks them
// against the api.proto of Debian's golang-k8s-cri-api-dev. Turned into descriptors with the
// NRI tables (descriptors.ts), so what is checked is what runs.
import type { FileFact, MethodFact } from './nri-schema.ts';

export const CRI_PACKAGE = 'runtime.v1';
export const CRI_SERVICE = `${CRI_PACKAGE}.RuntimeService`;

export const CRI_FILE: FileFact = {
  name: 'envhook/cri/api.proto',
  package: CRI_PACKAGE,
  dependency: [],
  messages: {
    // timeout: seconds the runtime waits after the stop signal before it kills; 0 kills at once.
    StopContainerRequest: [
      { name: 'container_id', number: 1, type: 'string' },
      { name: 'timeout', number: 2, type: 'int64' },
    ],
    StopContainerResponse: [],
    // Before the first StopContainer on a socket: whose CRI it is (runtime_name "containerd", "cri-o").
    VersionRequest: [{ name: 'version', number: 1, type: 'string' }],
    VersionResponse: [
      { name: 'version', number: 1, type: 'string' },
      { name: 'runtime_name', number: 2, type: 'string' },
      { name: 'runtime_version', number: 3, type: 'string' },
      { name: 'runtime_api_version', number: 4, type: 'string' },
    ],
  },
};

/** The RuntimeService methods envhook calls. */
export const CRI_METHODS = {
  StopContainer: { request: 'StopContainerRequest', response: 'StopContainerResponse' },
  Version: { request: 'VersionRequest', response: 'VersionResponse' },
} as const satisfies Record<string, MethodFact>;
