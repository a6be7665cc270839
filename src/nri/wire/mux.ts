// One NRI socket (a unix stream, dialled or handed over as an fd) carrying NRI's multiplexer:
// two logical connections, each a ttRPC byte stream. A frame for a connection nobody opened,
// a malformed frame or any ProtocolError from above closes the whole socket with one log line;
// the owner learns it from `closed`.
import type { Duplex } from 'node:stream';
import { encodeMux, MuxDecoder, ProtocolError, TtrpcDecoder, type TtrpcFrame } from './frames.ts';
import { describeError, errnoReason } from '../../errors.ts';
import type { Logger } from '../../log.ts';

export interface Channel {
  /** Set by the ttRPC endpoint that owns this logical connection. */
  onFrame: (frame: TtrpcFrame) => void;
  send(frame: Buffer): void;
}

export class MuxConnection {
  readonly closed: Promise<string>;
  private channels = new Map<number, { channel: Channel; decoder: TtrpcDecoder }>();
  private decoder = new MuxDecoder();
  private done = false;
  private resolveClosed!: (reason: string) => void;

  private readonly socket: Duplex;
  private readonly log: Logger;

  constructor(socket: Duplex, log: Logger) {
    this.socket = socket;
    this.log = log;
    this.closed = new Promise((resolve) => (this.resolveClosed = resolve));
    socket.on('data', (chunk: Buffer) => this.receive(chunk));
    socket.on('error', (err: NodeJS.ErrnoException) => this.close(`socket error: ${errnoReason(err)}`));
    socket.on('close', () => this.close('closed by the peer'));
    socket.on('end', () => this.close('closed by the peer'));
  }

  /** The logical connection `id` (NRI opens both ends blindly: no signalling). */
  open(id: number): Channel {
    const channel: Channel = {
      onFrame: () => {},
      send: (frame) => this.write(id, frame),
    };
    this.channels.set(id, { channel, decoder: new TtrpcDecoder() });
    return channel;
  }

  get isClosed(): boolean {
    return this.done;
  }

  /** Closes the socket once; `reason` goes to the log (it never holds payload bytes). */
  close(reason: string, err?: unknown): void {
    if (this.done) return;
    this.done = true;
    if (err !== undefined) this.log.warn({ err, reason: describeError(err) }, 'NRI connection closed: protocol error');
    else this.log.info({ reason }, 'NRI connection closed');
    this.socket.destroy();
    this.resolveClosed(err !== undefined ? describeError(err) : reason);
  }

  private write(id: number, frame: Buffer): void {
    if (this.done) return;
    // One write per frame keeps header and payload together on the socket.
    this.socket.write(Buffer.concat(encodeMux(id, frame)));
  }

  private receive(chunk: Buffer): void {
    if (this.done) return;
    try {
      for (const { conn, payload } of this.decoder.push(chunk)) {
        const entry = this.channels.get(conn);
        if (!entry) throw new ProtocolError(`multiplexer frame for unknown connection ${conn}`);
        for (const frame of entry.decoder.push(payload)) {
          entry.channel.onFrame(frame);
          if (this.done) return;
        }
      }
    } catch (err) {
      this.close('protocol error', err);
    }
  }
}
