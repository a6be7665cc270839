// The two framings on an NRI socket, both big-endian length-prefixed:
//   the multiplexer (NRI pkg/net/multiplex): conn id uint32, payload length uint32, payload;
//   ttRPC (containerd/ttrpc channel.go): payload length uint32, stream id uint32, type byte,
//   flags byte, payload of at most 4 MiB.
// Decoders take bytes as they arrive and return whole frames; anything malformed is a
// ProtocolError, after which the connection is closed (a peer that breaks framing cannot be
// resynchronised).
import { EnvhookError } from '../../errors.ts';

export class ProtocolError extends EnvhookError {
  override name = 'ProtocolError';
}

export const MUX_HEADER = 8;
const TTRPC_HEADER = 10;
export const TTRPC_MAX = 4 << 20;
/** The multiplexer's largest payload: one ttRPC header and a message of the maximum size. */
export const MUX_MAX = TTRPC_HEADER + TTRPC_MAX;

/** The multiplexer's logical connections: the plugin's ttRPC server and the runtime's. */
export const PLUGIN_CONN = 1;
export const RUNTIME_CONN = 2;

export const MessageType = { Request: 1, Response: 2, Data: 3 } as const;

export interface MuxFrame {
  conn: number;
  payload: Buffer;
}

export interface TtrpcFrame {
  streamId: number;
  type: number;
  flags: number;
  payload: Buffer;
}

/** A FIFO of received chunks, read from the front without copying more than needed. */
class ByteQueue {
  private chunks: Buffer[] = [];
  length = 0;

  push(chunk: Buffer): void {
    if (chunk.length === 0) return;
    this.chunks.push(chunk);
    this.length += chunk.length;
  }

  /** The first n bytes (n ≤ length), removed. */
  take(n: number): Buffer {
    this.length -= n;
    const first = this.chunks[0]!;
    if (first.length === n) return this.chunks.shift()!;
    if (first.length > n) {
      this.chunks[0] = first.subarray(n);
      return first.subarray(0, n);
    }
    const out = Buffer.allocUnsafe(n);
    let off = 0;
    while (off < n) {
      const c = this.chunks[0]!;
      const k = Math.min(c.length, n - off);
      c.copy(out, off, 0, k);
      off += k;
      if (k === c.length) this.chunks.shift();
      else this.chunks[0] = c.subarray(k);
    }
    return out;
  }

  /** A uint32 at `offset` from the front, without removing anything (offset + 4 ≤ length). */
  peekUint32(offset: number): number {
    const first = this.chunks[0]!;
    if (first.length >= offset + 4) return first.readUInt32BE(offset);
    let v = 0;
    for (let i = 0; i < 4; i++) v = v * 256 + this.byteAt(offset + i);
    return v;
  }

  byteAt(offset: number): number {
    for (const c of this.chunks) {
      if (offset < c.length) return c[offset]!;
      offset -= c.length;
    }
    throw new RangeError('byteAt past the end');
  }
}

/**
 * Reads length-prefixed frames: `header` bytes, of which the uint32 at `lengthAt` is the
 * payload's length. A length over `max` is refused from the header alone, before any of the
 * payload is buffered.
 */
class FrameReader<F> {
  private queue = new ByteQueue();
  private readonly spec: { header: number; lengthAt: number; max: number; what: string; make: (header: Buffer, payload: Buffer) => F };

  constructor(spec: FrameReader<F>['spec']) {
    this.spec = spec;
  }

  push(chunk: Buffer): F[] {
    const { header, lengthAt, max, what, make } = this.spec;
    this.queue.push(chunk);
    const out: F[] = [];
    while (this.queue.length >= header) {
      const size = this.queue.peekUint32(lengthAt);
      if (size > max) throw new ProtocolError(`${what} of ${size} bytes exceeds the limit of ${max}`);
      if (this.queue.length < header + size) break;
      const h = this.queue.take(header);
      out.push(make(h, size === 0 ? Buffer.alloc(0) : this.queue.take(size)));
    }
    return out;
  }
}

export class MuxDecoder extends FrameReader<MuxFrame> {
  constructor() {
    super({
      header: MUX_HEADER,
      lengthAt: 4,
      max: MUX_MAX,
      what: 'multiplexer frame',
      make: (h, payload) => ({ conn: h.readUInt32BE(0), payload }),
    });
  }
}

/**
 * The largest multiplexer frame envhook writes. The runtime's side hands each frame whole to one
 * Read of ttRPC's 4 KiB bufio reader, and a frame larger than the space that Read offers fails
 * with ENOMEM: containerd then closes the connection ("ttrpc: closed") and creates the container
 * without the plugin's changes. Seen with containerd 2.1.9 on a 5 KiB CreateContainer answer.
 * Frames of at most 4096 bytes always fit (a Read gets either bufio's emptied 4 KiB buffer or
 * the caller's own buffer of at least that much).
 */
export const MUX_WRITE_MAX = 4096;

/** Mux frames for one write on a logical connection, in pieces the runtime's reader takes. */
export function encodeMux(conn: number, payload: Buffer): Buffer[] {
  const out: Buffer[] = [];
  let off = 0;
  do {
    const size = Math.min(MUX_WRITE_MAX, payload.length - off);
    const header = Buffer.allocUnsafe(MUX_HEADER);
    header.writeUInt32BE(conn, 0);
    header.writeUInt32BE(size, 4);
    out.push(header, payload.subarray(off, off + size));
    off += size;
  } while (off < payload.length);
  return out;
}

export class TtrpcDecoder extends FrameReader<TtrpcFrame> {
  constructor() {
    super({ header: TTRPC_HEADER, lengthAt: 0, max: TTRPC_MAX, what: 'ttRPC message', make: parseTtrpc });
  }
}

function parseTtrpc(header: Buffer, payload: Buffer): TtrpcFrame {
  const type = header[8]!;
  if (type !== MessageType.Request && type !== MessageType.Response && type !== MessageType.Data) {
    throw new ProtocolError(`unknown ttRPC message type ${type}`);
  }
  return { streamId: header.readUInt32BE(4), type, flags: header[9]!, payload };
}

/** One ttRPC frame (header and payload in one buffer); a payload over 4 MiB is refused. */
export function encodeTtrpc(frame: { streamId: number; type: number; flags?: number; payload: Uint8Array }): Buffer {
  const { payload } = frame;
  if (payload.length > TTRPC_MAX) throw new ProtocolError(`ttRPC message of ${payload.length} bytes exceeds the limit of ${TTRPC_MAX}`);
  const out = Buffer.allocUnsafe(TTRPC_HEADER + payload.length);
  out.writeUInt32BE(payload.length, 0);
  out.writeUInt32BE(frame.streamId, 4);
  out[8] = frame.type;
  out[9] = frame.flags ?? 0;
  out.set(payload, TTRPC_HEADER);
  return out;
}
