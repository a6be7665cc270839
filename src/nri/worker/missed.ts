// Containers created while envhook was away (NRI fails open): their pod asks for env from
// envhook, the container is not stopped, and it lacks envhook's applied mark for these very
// annotations. Found in the runtime's Synchronize, which lists every pod and container at each
// registration. Pure: names and ids only, never an annotation value.
import { describeError } from '../../errors.ts';
import { isSandbox } from '../../k8s/identity.ts';
import { GUARD_HANDLER } from './types.ts';
import { appliedDigest, envRequested } from '../../plan/mark.ts';
import { CONTAINER_STOPPED } from '../wire/nri-schema.ts';
import type { NriPod } from '../../facts/nri-facts.ts';
import type { NriSyncContainer } from '../wire/plain-data.ts';
import { APPLIED_KEY, EVICT_KEY } from '../../k8s/annotation-keys.ts';
import type { MissedContainer } from '../worker-messages.ts';

export function findMissed(pods: readonly NriPod[], containers: readonly NriSyncContainer[]): MissedContainer[] {
  const byId = new Map(pods.map((p) => [p.id, p]));
  const missed: MissedContainer[] = [];
  for (const c of containers) {
    const pod = byId.get(c.podSandboxId);
    if (!pod || c.state === CONTAINER_STOPPED || isSandbox(c.annotations)) continue;
    // Under the guard handler the runtime front applies env that NRI did not.
    if (pod.runtimeHandler === GUARD_HANDLER) continue;
    const facts = { annotations: pod.annotations, container: c.name };
    let invalid: string | undefined;
    try {
      if (!envRequested(facts)) continue;
      if (c.annotations[APPLIED_KEY] === appliedDigest(facts)) continue;
    } catch (err) {
      invalid = describeError(err);
    }
    missed.push({
      id: c.id,
      name: c.name,
      pod: pod.name,
      namespace: pod.namespace,
      podUid: pod.uid,
      podEvicts: pod.annotations[EVICT_KEY] === 'true',
      ...(invalid === undefined ? {} : { invalid }),
      ...(c.pid ? { pid: c.pid } : {}),
    });
  }
  return missed;
}
