// Evictions through NRI: Runtime.UpdateContainers with `evict` entries (container id and a
// human-readable reason) and no update. The protocol has had them since before NRI 0.8.0, but
// NRI's runtime side relays only `update` to the runtime (pkg/adaptation, every release up to
// 0.12.2), so a runtime answers an eviction-only request with an empty `failed` and does
// nothing: docs/nri.md, "Evictions". The answer is still read as the protocol defines it.
import { EnvhookError } from '../errors.ts';
import { decode, encode, Msg, type UpdateContainersResponseShape } from './descriptors.ts';
import { RUNTIME_SERVICE } from './schema.ts';
import { Code, RpcError, type TtrpcClient } from './ttrpc.ts';

export interface Eviction {
  containerId: string;
  /** Sent to the runtime as is: names and fixed words only, never a value. */
  reason: string;
}

/** Why a call failed, in our words: the runtime's status message is never passed on. */
function failure(err: unknown, timeoutMs: number): string {
  const code = err instanceof RpcError ? err.code : undefined;
  if (code === Code.DeadlineExceeded) return `no response within ${timeoutMs} ms`;
  if (code === Code.Unavailable) return 'the connection to the runtime is gone';
  if (code === Code.Unimplemented) return 'the runtime does not implement UpdateContainers';
  if (code !== undefined) return `the runtime answered with error status ${code}`;
  return err instanceof EnvhookError ? err.message : 'internal error';
}

/** Asks the runtime to evict `list`; resolves with the ids it reports as failed. */
export async function evictContainers(runtime: TtrpcClient, list: readonly Eviction[], timeoutMs: number): Promise<{ failed: string[] }> {
  if (list.length === 0) return { failed: [] };
  const evict = list.map(({ containerId, reason }) => ({ containerId, reason }));
  let payload: Buffer;
  try {
    payload = await runtime.call(RUNTIME_SERVICE, 'UpdateContainers', encode(Msg.UpdateContainersRequest, { evict }), timeoutMs);
  } catch (err) {
    throw new EnvhookError(`NRI eviction of ${list.length} container(s) failed: ${failure(err, timeoutMs)}`);
  }
  const res = decode<UpdateContainersResponseShape>(Msg.UpdateContainersResponse, payload);
  return { failed: res.failed.map((u) => u.containerId) };
}
