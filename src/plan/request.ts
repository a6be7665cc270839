// What the pod's annotations ask of this one container (docs/design.md#annotations): its entries of the three env
// annotations and the pod's volume owners, each validated against its schema. Pure: it reads
// annotations only, so a container that asks for nothing costs no file I/O.
import { entryFor, readEnv, readEnvFrom, readServiceLinks, fromSource, valueSource } from '../k8s/annotations.ts';
import { readVolumeOwners, type VolumeOwner } from '../ownership/annotation.ts';
import type { EnvRequest } from '../resolve/env.ts';
import type { Facts } from '../facts/facts.ts';
import { ENV_FROM_KEY, ENV_KEY, SERVICE_LINKS_KEY } from '../k8s/annotation-keys.ts';

/** This container's entries of the three env annotations (validated); undefined if it has none. */
export function envRequest(facts: Pick<Facts, 'annotations' | 'container'>): EnvRequest | undefined {
  const { annotations, container } = facts;
  const env = entryFor(readEnv(annotations), ENV_KEY, container, false);
  const envFrom = entryFor(readEnvFrom(annotations), ENV_FROM_KEY, container, false);
  const links = entryFor(readServiceLinks(annotations), SERVICE_LINKS_KEY, container, true);
  if (env === undefined && envFrom === undefined && links === undefined) return undefined;
  return { env: env ?? [], envFrom: envFrom ?? [], removeServiceLinks: links === false };
}

/** The pod's owner entries: not per container, so every container of the pod applies them (idempotent). */
export function ownersRequest(facts: Pick<Facts, 'annotations'>): VolumeOwner[] {
  return readVolumeOwners(facts.annotations) ?? [];
}

/** Names of the volumes a request reads that no admin override maps: those need the pod directory. */
export function podVolumes(env: EnvRequest | undefined, owners: readonly VolumeOwner[], overrides: ReadonlyMap<string, string>): string[] {
  const names = [
    ...(env?.envFrom ?? []).map((s) => fromSource(s).ref.volumeName),
    ...(env?.env ?? []).flatMap((v) => (v.valueFrom ? [valueSource(v.valueFrom).ref.volumeName] : [])),
    ...owners.map((o) => o.volume),
  ];
  return names.filter((n) => !overrides.has(n));
}
