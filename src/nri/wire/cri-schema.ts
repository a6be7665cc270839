// The one CRI call envhook makes, as our own table of facts: cri-api's runtime.v1
// RuntimeService/StopContainer, its request and response (message names, field names, numbers
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
  },
};

/** The RuntimeService methods envhook calls. */
export const CRI_METHODS = {
  StopContainer: { request: 'StopContainerRequest', response: 'StopContainerResponse' },
} as const satisfies Record<string, MethodFact>;
