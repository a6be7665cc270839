// A CRI RuntimeService/StopContainer (and Version, naming a runtime) served by a real gRPC implementation (@grpc/grpc-js) on a
// unix socket, its messages read with cri-api's api.proto from Debian sid (cri-proto.ts), so a
// request is checked as the runtime's own gRPC server would read it. It answers as containerd's
// CRI does: an empty StopContainerResponse for a container it has (also one already stopped),
// NotFound with containerd's words for an id it does not know.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { fromBinary, toBinary, create, type DescMessage } from '@bufbuild/protobuf';
import { criMessage } from './proto.ts';
import type { CriMessage } from './client.ts';

export interface CriServer {
  socket: string;
  /** Every StopContainerRequest received, decoded with cri-api's own descriptor. */
  stops: CriMessage[];
  /** The most calls it was answering at once. */
  maxInFlight(): number;
  close(): Promise<void>;
}

export interface CriServerOptions {
  /** Container ids it knows (default: every id). */
  known?: (id: string) => boolean;
  /** Hold each answer this long (a runtime that takes its time). */
  delayMs?: number;
  /** Answer Version with this runtime_name, as containerd ("containerd") and CRI-O ("cri-o") do; without it, Version is UNIMPLEMENTED. */
  runtimeName?: string;
}

export async function startCriServer(opts: CriServerOptions = {}): Promise<CriServer> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'envhook-cri-'));
  const socket = path.join(dir, 'cri.sock');
  const input = criMessage('StopContainerRequest');
  const output = criMessage('StopContainerResponse');
  const stops: CriMessage[] = [];
  let inFlight = 0;
  let most = 0;
  const server = new grpc.Server();
  const codec = (d: DescMessage) => ({
    serialize: (m: CriMessage) => Buffer.from(toBinary(d, create(d, m as never))),
    deserialize: (b: Buffer) => fromBinary(d, b) as CriMessage,
  });
  const [vIn, vOut] = [criMessage('VersionRequest'), criMessage('VersionResponse')];
  server.addService(
    {
      Version: {
        path: '/runtime.v1.RuntimeService/Version',
        requestStream: false,
        responseStream: false,
        requestSerialize: codec(vIn).serialize,
        requestDeserialize: codec(vIn).deserialize,
        responseSerialize: codec(vOut).serialize,
        responseDeserialize: codec(vOut).deserialize,
      },
      StopContainer: {
        path: '/runtime.v1.RuntimeService/StopContainer',
        requestStream: false,
        responseStream: false,
        requestSerialize: codec(input).serialize,
        requestDeserialize: codec(input).deserialize,
        responseSerialize: codec(output).serialize,
        responseDeserialize: codec(output).deserialize,
      },
    },
    {
      Version: (_call: grpc.ServerUnaryCall<CriMessage, CriMessage>, done: grpc.sendUnaryData<CriMessage>) => {
        if (opts.runtimeName === undefined) done({ code: grpc.status.UNIMPLEMENTED, details: 'unknown method Version' });
        else done(null, { version: '0.1.0', runtimeName: opts.runtimeName, runtimeVersion: 'v2.1.9', runtimeApiVersion: 'v1' });
      },
      StopContainer: (call: grpc.ServerUnaryCall<CriMessage, CriMessage>, done: grpc.sendUnaryData<CriMessage>) => {
        stops.push(call.request);
        most = Math.max(most, ++inFlight);
        const id = call.request.containerId as string;
        setTimeout(() => {
          inFlight--;
          if (opts.known && !opts.known(id))
            done({ code: grpc.status.NOT_FOUND, details: `an error occurred when try to find container "${id}": not found` });
          else done(null, {});
        }, opts.delayMs ?? 0);
      },
    },
  );
  await new Promise<void>((resolve, reject) =>
    server.bindAsync(`unix:${socket}`, grpc.ServerCredentials.createInsecure(), (err) => (err ? reject(err) : resolve())),
  );
  return {
    socket,
    stops,
    maxInFlight: () => most,
    async close() {
      server.forceShutdown();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
