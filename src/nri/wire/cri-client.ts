// envhook's CRI client: the runtime's CRI socket (the kubelet's), for the calls envhook makes
// there, RuntimeService/StopContainer and Version (cri-schema.ts), over grpc.ts. NRI itself cannot
// stop a container: its evictions are dropped by every runtime (docs/nri-internals.md#evictions-what-the-runtimes-do).
import fs from 'node:fs';
import { decode, encode, Msg, type VersionResponseShape } from './descriptors.ts';
import { CRI_SERVICE } from './cri-schema.ts';
import { grpcChannel, type GrpcChannel } from './grpc.ts';

/** The runtimes' own CRI sockets, by the runtime name NRI's Configure gives. */
export const CRI_SOCKETS: Readonly<Record<string, string>> = {
  containerd: '/run/containerd/containerd.sock',
  'cri-o': '/var/run/crio/crio.sock',
};

/**
 * The socket to use when none is set: the registered runtime's own, if it exists, else the
 * first of the known ones that exists; undefined when none does.
 */
export function defaultCriSocket(runtimeName: string | undefined, exists: (p: string) => boolean = fs.existsSync): string | undefined {
  const own = runtimeName === undefined ? undefined : CRI_SOCKETS[runtimeName];
  if (own && exists(own)) return own;
  return Object.values(CRI_SOCKETS).find((p) => exists(p));
}

export interface CriClient {
  /**
   * StopContainer: the runtime sends the stop signal, waits `timeoutSeconds`, kills, and answers
   * once the container has exited (0: killed at once). Rejects with a GrpcError.
   */
  stopContainer(containerId: string, timeoutSeconds: number, deadlineMs: number): Promise<void>;
  /** Version: the runtime that serves this socket (runtime_name: "containerd", "cri-o"). Rejects with a GrpcError. */
  runtimeName(deadlineMs: number): Promise<string>;
  close(): void;
}

export function criClient(socketPath: string, channel: GrpcChannel = grpcChannel(socketPath)): CriClient {
  return {
    async stopContainer(containerId, timeoutSeconds, deadlineMs) {
      const request = encode(Msg.StopContainerRequest, { containerId, timeout: BigInt(timeoutSeconds) });
      decode(Msg.StopContainerResponse, await channel.call(`/${CRI_SERVICE}/StopContainer`, request, deadlineMs));
    },
    async runtimeName(deadlineMs) {
      const request = encode(Msg.VersionRequest, { version: 'v1' });
      return decode<VersionResponseShape>(Msg.VersionResponse, await channel.call(`/${CRI_SERVICE}/Version`, request, deadlineMs))
        .runtimeName;
    },
    close: () => channel.close(),
  };
}
