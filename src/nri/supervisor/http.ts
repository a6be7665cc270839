// The supervisor's optional HTTP endpoint (`--metrics-address`, off by default): /metrics
// (Prometheus text), /healthz (liveness: 200 while the supervisor runs), /readyz (readiness: 200
// while registered with the runtime). It lives in the supervisor, so it answers across worker
// restarts. Anyone who reaches the port may be hostile: node:http's limits are set tight
// (headers, time, connections), a bad request is answered 400/408/431 and its socket destroyed,
// and nothing a peer sends can end the process.
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { EnvhookError, errnoReason } from '../../errors.ts';
import type { Logger } from '../../log.ts';
import { listenAddress, type ListenAddress } from '../../listen-address.ts';
import { METRICS_ADDRESS_FORMS } from '../../schema.ts';
import { renderMetrics, type DurationHistogram } from './metrics.ts';
import type { NriStatus } from '../status-file.ts';

/** `127.0.0.1:9901`, `[::1]:9901`, `[127.0.0.1]:9901`, `localhost:9901`, or `:9901` for every interface (listen-address.ts). */
export function parseAddress(address: string): ListenAddress {
  const a = listenAddress(address);
  if (a) return a;
  const shown = JSON.stringify(address.length > 100 ? address.slice(0, 100) + '…' : address);
  throw new EnvhookError(`metrics address ${shown}: ${METRICS_ADDRESS_FORMS}`);
}

export interface HealthServerOptions {
  address: string;
  status: () => NriStatus;
  histogram: DurationHistogram;
  log: Logger;
}

export interface HealthServer {
  /** What the socket is bound to (the port chosen, for port 0). */
  address: { host: string; port: number };
  /** Stops listening and ends every open connection. */
  close(): Promise<void>;
}

// A scraper or probe sends one small GET; a peer that does more is cut off early.
const LIMITS = {
  maxHeaderSize: 8 * 1024,
  headersTimeout: 2_000,
  requestTimeout: 5_000,
  keepAliveTimeout: 5_000,
  // How often node:http checks headersTimeout and requestTimeout (default 30 s).
  connectionsCheckingInterval: 500,
} as const;
const MAX_CONNECTIONS = 32;
const IDLE_TIMEOUT = 10_000;

export const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

export async function startHealthServer(opts: HealthServerOptions): Promise<HealthServer> {
  const { host, port } = parseAddress(opts.address);
  const server = http.createServer(LIMITS, (req, res) => answer(req, res, opts));
  server.maxConnections = MAX_CONNECTIONS;
  // A socket idle this long (no request, or stalled mid-request) is destroyed.
  server.setTimeout(IDLE_TIMEOUT);
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => refuse(err, socket, opts.log));
  await new Promise<void>((resolve, reject) => {
    const failed = (cause: NodeJS.ErrnoException) =>
      reject(new EnvhookError(`cannot listen on metrics address ${opts.address}: ${errnoReason(cause)}`, { cause }));
    server.once('error', failed);
    server.listen({ host, port }, () => {
      server.off('error', failed);
      resolve();
    });
  });
  // After listen, an error of the server itself (not of a peer) is logged, never thrown.
  server.on('error', (err) => opts.log.warn({ err }, 'metrics server error'));
  const bound = server.address() as AddressInfo;
  opts.log.info({ address: bound.address, port: bound.port }, 'metrics listening');
  return {
    address: { host: bound.address, port: bound.port },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function answer(req: http.IncomingMessage, res: http.ServerResponse, opts: HealthServerOptions): void {
  req.resume(); // a body, if a peer sends one, is read and dropped
  const path = (req.url ?? '').split('?')[0];
  const send = (code: number, body: string, type = 'text/plain; charset=utf-8') => {
    res.writeHead(code, { 'Content-Type': type, 'Content-Length': Buffer.byteLength(body), 'Cache-Control': 'no-store' });
    res.end(req.method === 'HEAD' ? undefined : body);
  };
  if (path !== '/metrics' && path !== '/healthz' && path !== '/readyz') return send(404, 'not found: /metrics, /healthz, /readyz\n');
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.setHeader('Allow', 'GET, HEAD');
    return send(405, 'method not allowed\n');
  }
  if (path === '/healthz') return send(200, 'ok\n');
  let status: NriStatus;
  try {
    status = opts.status();
    if (path === '/metrics') return send(200, renderMetrics(status, opts.histogram), METRICS_CONTENT_TYPE);
  } catch (err) {
    opts.log.warn({ err, path }, 'metrics: no status to serve');
    return send(500, 'internal error\n');
  }
  if (status.connected) return send(200, `connected since ${status.since}\n`);
  send(503, `not connected since ${status.since}\n`);
}

/** node:http's own answers to a bad request, with the socket destroyed in every case. */
function refuse(err: NodeJS.ErrnoException, socket: Socket, log: Logger): void {
  log.debug({ code: err.code }, 'metrics: bad request');
  const code = err.code === 'HPE_HEADER_OVERFLOW' ? 431 : err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
  const text = { 400: 'Bad Request', 408: 'Request Timeout', 431: 'Request Header Fields Too Large' }[code];
  // As node:http's default: a few bytes the kernel takes at once, then the socket is gone.
  if (socket.writable && socket.bytesWritten === 0 && err.code !== 'ECONNRESET')
    socket.write(`HTTP/1.1 ${code} ${text}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
  socket.destroy();
}
