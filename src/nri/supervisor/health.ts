// The metrics and health endpoint, when asked for (`--metrics-address`). It lives in the
// supervisor, so it answers while a worker is replaced; it is bound before the first worker
// starts, so an address that cannot be used (busy, not this host's) ends the command with one
// line, the lock released and nothing started. An instance that took over from another
// (instance.ts) binds it once that one has released it.
import type { Logger } from '../../log.ts';
import type { NriStatus } from '../status-file.ts';
import type { DurationHistogram } from './metrics.ts';

export async function startHealth(
  address: string | undefined,
  status: () => NriStatus,
  histogram: DurationHistogram,
  log: Logger,
  lock: { release(): Promise<void> },
) {
  if (address === undefined) return undefined;
  // node:http is loaded only when the endpoint is asked for.
  const { startHealthServer } = await import('./http.ts');
  try {
    const server = await startHealthServer({ address, status, histogram, log });
    log.info({ address: `${server.address.host}:${server.address.port}` }, 'nri: metrics and health endpoint listening');
    return server;
  } catch (err) {
    await lock.release();
    throw err;
  }
}
