// ttRPC unary calls over one logical connection: a server that answers Requests from a table
// of its services' method tables (service → method → function), and a client that sends them. Streams (Data frames) are not part of NRI
// and are a protocol error, as is a frame of the wrong direction or for an unknown stream.
import { EnvhookError, describeError } from '../../errors.ts';
import { decode, encode, Msg, type RequestShape, type ResponseShape } from './descriptors.ts';
import { encodeTtrpc, MessageType, ProtocolError, TTRPC_MAX, type TtrpcFrame } from './frames.ts';
import type { Channel } from './mux.ts';
import { encodeResponsePayload } from './reply-encoder.ts';

/** gRPC status codes used here (google.rpc.Code). */
export const Code = { OK: 0, Unknown: 2, DeadlineExceeded: 4, ResourceExhausted: 8, Unimplemented: 12, Unavailable: 14 } as const;

/** An error status returned by the remote side, or to be returned to it. */
export class RpcError extends EnvhookError {
  override name = 'RpcError';
  readonly code: number;
  constructor(code: number, message: string) {
    super(message);
    this.code = code;
  }
}

/** One method: the request's payload and the server's context in, the response's payload out. */
export type Method<C = void> = (payload: Buffer, context: C) => Uint8Array | Promise<Uint8Array>;

/** Each service's methods by name, as a Request names them. */
export type Services<C = void> = Readonly<Record<string, Readonly<Record<string, Method<C>>>>>;

export interface ServerOptions<C> {
  /** Passed to every method (the session's state); none for a server of `Method<void>`. */
  context?: C;
  /** Turns a thrown error into the status message sent back. */
  describe?: (err: unknown) => string;
}

export class TtrpcServer<C = void> {
  private readonly channel: Channel;
  private readonly services: Services<C>;
  private readonly context: C;
  private readonly describe: (err: unknown) => string;

  constructor(channel: Channel, services: Services<C>, options: ServerOptions<C> = {}) {
    this.channel = channel;
    this.services = services;
    this.context = options.context as C;
    this.describe = options.describe ?? describeError;
    channel.onFrame = (frame) => this.receive(frame);
  }

  /** The method a Request names: own entries of the tables only (never an Object.prototype name). */
  private method(service: string, method: string): Method<C> | undefined {
    const methods = Object.hasOwn(this.services, service) ? this.services[service] : undefined;
    return methods && Object.hasOwn(methods, method) ? methods[method] : undefined;
  }

  private receive(frame: TtrpcFrame): void {
    if (frame.type !== MessageType.Request) throw new ProtocolError(`unexpected ttRPC message type ${frame.type} on the server side`);
    if (frame.streamId % 2 !== 1) throw new ProtocolError(`ttRPC request on even stream ${frame.streamId}`);
    const req = decode<RequestShape>(Msg.Request, frame.payload);
    const method = this.method(req.service, req.method);
    if (!method) {
      this.reply(frame.streamId, new RpcError(Code.Unimplemented, `method ${req.service}/${req.method} not implemented`));
      return;
    }
    let result: Uint8Array | Promise<Uint8Array>;
    try {
      result = method(Buffer.from(req.payload.buffer, req.payload.byteOffset, req.payload.byteLength), this.context);
    } catch (err) {
      this.reply(frame.streamId, err);
      return;
    }
    if (result instanceof Uint8Array) this.reply(frame.streamId, undefined, result);
    else
      result.then(
        (payload) => this.reply(frame.streamId, undefined, payload),
        (err: unknown) => this.reply(frame.streamId, err),
      );
  }

  private reply(streamId: number, err: unknown, payload?: Uint8Array): void {
    let response: Uint8Array;
    if (err === undefined) {
      response = encodeResponsePayload(payload ?? new Uint8Array(0));
      if (response.length > TTRPC_MAX)
        err = new RpcError(Code.ResourceExhausted, `response of ${response.length} bytes exceeds the ttRPC limit of ${TTRPC_MAX}`);
    }
    if (err !== undefined) {
      const code = err instanceof RpcError ? err.code : Code.Unknown;
      response = encode(Msg.Response, { status: { code, message: this.describe(err) } });
    }
    this.channel.send(encodeTtrpc({ streamId, type: MessageType.Response, payload: response! }));
  }
}

export class TtrpcClient {
  private nextStream = 1;
  private pending = new Map<number, { resolve: (b: Buffer) => void; reject: (e: Error) => void; timer: NodeJS.Timeout }>();

  private readonly channel: Channel;

  constructor(channel: Channel) {
    this.channel = channel;
    channel.onFrame = (frame) => this.receive(frame);
  }

  /** One unary call; rejects with RpcError on an error status or when `timeoutMs` passes. */
  call(service: string, method: string, payload: Uint8Array, timeoutMs: number): Promise<Buffer> {
    const streamId = this.nextStream;
    this.nextStream += 2;
    const request = encode(Msg.Request, { service, method, payload, timeoutNano: BigInt(timeoutMs) * 1_000_000n });
    return new Promise<Buffer>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(streamId);
        reject(new RpcError(Code.DeadlineExceeded, `${service}/${method}: no response within ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(streamId, { resolve, reject, timer });
      this.channel.send(encodeTtrpc({ streamId, type: MessageType.Request, payload: request }));
    });
  }

  /** Fails every call in flight (the connection is gone). */
  abort(reason: string): void {
    for (const [id, p] of this.pending) {
      clearTimeout(p.timer);
      p.reject(new RpcError(Code.Unavailable, reason));
      this.pending.delete(id);
    }
  }

  private receive(frame: TtrpcFrame): void {
    if (frame.type !== MessageType.Response) throw new ProtocolError(`unexpected ttRPC message type ${frame.type} on the client side`);
    const p = this.pending.get(frame.streamId);
    if (!p) throw new ProtocolError(`ttRPC response for unknown stream ${frame.streamId}`);
    this.pending.delete(frame.streamId);
    clearTimeout(p.timer);
    const res = decode<ResponseShape>(Msg.Response, frame.payload);
    if (res.status && res.status.code !== Code.OK) p.reject(new RpcError(res.status.code, res.status.message));
    else p.resolve(Buffer.from(res.payload.buffer, res.payload.byteOffset, res.payload.byteLength));
  }
}
