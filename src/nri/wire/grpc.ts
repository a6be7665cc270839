// A unary gRPC call over HTTP/2 without TLS on a unix socket (how a runtime serves CRI), with
// node:http2 and nothing else: a POST to /<service>/<method> with `content-type:
// application/grpc` and `te: trailers`, the message in one length-prefixed frame (a flag byte,
// 0 for uncompressed, and a 4-byte big-endian length), and the answer's `grpc-status` in its
// trailers (or in its headers, for an answer without a body). The peer's `grpc-message` is
// never read: errors carry the status code and envhook's own words only.
import http2 from 'node:http2';
import net from 'node:net';
import { errnoReason } from '../../errors.ts';

/** gRPC status codes by number, as the gRPC protocol numbers them. */
const GRPC_CODES = [
  'OK',
  'CANCELLED',
  'UNKNOWN',
  'INVALID_ARGUMENT',
  'DEADLINE_EXCEEDED',
  'NOT_FOUND',
  'ALREADY_EXISTS',
  'PERMISSION_DENIED',
  'RESOURCE_EXHAUSTED',
  'FAILED_PRECONDITION',
  'ABORTED',
  'OUT_OF_RANGE',
  'UNIMPLEMENTED',
  'INTERNAL',
  'UNAVAILABLE',
  'DATA_LOSS',
  'UNAUTHENTICATED',
] as const;

/** An answer larger than this is not one of the small messages envhook asks for. */
const MAX_ANSWER = 64 * 1024;

/** A failed call: `unreachable` when the socket could not be used at all (nothing was asked). */
export class GrpcError extends Error {
  readonly kind: 'unreachable' | 'status' | 'timeout' | 'protocol';
  readonly code: number | undefined;
  constructor(message: string, kind: GrpcError['kind'], code?: number) {
    super(message);
    this.name = 'GrpcError';
    this.kind = kind;
    this.code = code;
  }
}

/** The message in a gRPC length-prefixed frame. */
export function grpcFrame(message: Uint8Array): Buffer {
  const head = Buffer.alloc(5);
  head.writeUInt32BE(message.length, 1);
  return Buffer.concat([head, message]);
}

/** The message of an answer's body: exactly one uncompressed frame (or none: an empty message). */
export function unframe(body: Buffer): Buffer {
  if (body.length === 0) return body;
  if (body.length < 5 || body[0] !== 0 || body.readUInt32BE(1) !== body.length - 5)
    throw new GrpcError('the answer is not one uncompressed gRPC message', 'protocol');
  return body.subarray(5);
}

export interface GrpcChannel {
  /** One unary call; resolves with the answer's message bytes, rejects with a GrpcError. */
  call(path: string, message: Uint8Array, timeoutMs: number): Promise<Buffer>;
  close(): void;
}

/** A channel to `socketPath`, connected at the first call and again after a failure. */
export function grpcChannel(socketPath: string): GrpcChannel {
  let session: http2.ClientHttp2Session | undefined;
  let sessionError: string | undefined;

  const open = (): http2.ClientHttp2Session => {
    if (session && !session.closed && !session.destroyed) return session;
    sessionError = undefined;
    let connected = false;
    const s = http2.connect('http://localhost', {
      createConnection: () => {
        const sock = net.createConnection(socketPath);
        sock.once('connect', () => (connected = true));
        // Before the session hears of it: a call on a socket that never connected asked nothing.
        sock.once('error', (err: NodeJS.ErrnoException) => {
          // in words with its code (`no such file or directory (ENOENT)`), never the code alone
          if (!connected) sessionError = errnoReason(err);
        });
        return sock;
      },
    });
    s.on('error', () => {});
    // An idle channel must not keep the process alive.
    s.unref();
    session = s;
    return s;
  };
  const unreachable = () =>
    sessionError === undefined ? undefined : new GrpcError(`CRI socket ${socketPath}: ${sessionError}`, 'unreachable');

  return {
    call: (path, message, timeoutMs) => unaryCall(open(), { path, message, timeoutMs }, unreachable),
    close() {
      session?.destroy();
      session = undefined;
    },
  };
}

/**
 * One unary call on the session, within `timeoutMs` (the connection included; the peer is told it
 * too). `unreachable`: the error when the session's connection failed before anything was asked.
 */
function unaryCall(
  s: http2.ClientHttp2Session,
  { path, message, timeoutMs }: { path: string; message: Uint8Array; timeoutMs: number },
  unreachable: () => GrpcError | undefined,
): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    let settled = false;
    let responded = false;
    const chunks: Buffer[] = [];
    let size = 0;
    const done = (err: GrpcError | undefined, value?: Buffer) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (!req.closed) req.close(http2.constants.NGHTTP2_CANCEL);
      if (err) reject(err);
      else resolve(value!);
    };
    const timer = setTimeout(() => done(new GrpcError(`no answer within ${timeoutMs} ms`, 'timeout')), timeoutMs);
    const req = s.request({
      ':method': 'POST',
      ':path': path,
      'content-type': 'application/grpc',
      te: 'trailers',
      'grpc-timeout': `${Math.max(1, Math.ceil(timeoutMs))}m`,
    });
    const status = (headers: http2.IncomingHttpHeaders): void => {
      const answer = answerOf(headers, chunks);
      if (answer instanceof GrpcError) done(answer);
      else if (answer !== undefined) done(undefined, answer);
    };
    req.on('response', (headers) => {
      responded = true;
      const wrong = notGrpc(headers);
      if (wrong) return done(wrong);
      status(headers);
    });
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_ANSWER) return done(new GrpcError(`the answer is larger than ${MAX_ANSWER} bytes`, 'protocol'));
      chunks.push(chunk);
    });
    req.on('trailers', status);
    req.on('error', () => {});
    req.on('close', () => {
      if (settled) return;
      // No status: the connection failed before an answer (nothing asked), or the stream ended without one.
      const gone = responded ? undefined : unreachable();
      if (gone) return done(gone);
      done(new GrpcError(responded ? 'the answer ended without a grpc-status' : 'the connection closed without an answer', 'protocol'));
    });
    req.end(grpcFrame(message));
  });
}

/** The error for a response that is not gRPC's (HTTP status, content type), if it is not. */
function notGrpc(headers: http2.IncomingHttpHeaders & http2.IncomingHttpStatusHeader): GrpcError | undefined {
  const type = String(headers['content-type'] ?? '');
  if (headers[':status'] === 200 && type.startsWith('application/grpc')) return undefined;
  return new GrpcError(
    `not a gRPC answer (HTTP status ${headers[':status']}, content-type ${JSON.stringify(type.slice(0, 40))})`,
    'protocol',
  );
}

/** The call's outcome once headers or trailers carry grpc-status: the message, or the error; undefined before. */
function answerOf(headers: http2.IncomingHttpHeaders, chunks: readonly Buffer[]): Buffer | GrpcError | undefined {
  const raw = headers['grpc-status'];
  if (raw === undefined) return undefined;
  const code = Number(raw);
  if (!Number.isInteger(code) || code < 0) return new GrpcError('the answer has no valid grpc-status', 'protocol');
  if (code !== 0) return new GrpcError(`the runtime answered ${GRPC_CODES[code] ?? 'status'} (gRPC status ${code})`, 'status', code);
  try {
    return unframe(Buffer.concat(chunks));
  } catch (err) {
    return err as GrpcError;
  }
}
