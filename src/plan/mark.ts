// The marks (docs/design.md#marks). `envhook.io/applied`: the config.json and NRI appliers set it when they
// applied env for a container; the hook stage (and the runtime front) read it.
// `envhook.io/applied-env`: the names (never values) of what the config.json applier set and
// removed; the front's exec path reads it to give an exec'd process PID 1's env changes.
import { EnvhookError } from '../errors.ts';
import type { Facts } from '../facts/facts.ts';
import { envRequest } from './request.ts';
import { sha256Hex } from './sha256.ts';
import { APPLIED_ENV_KEY, APPLIED_KEY, ENV_KEYS } from '../k8s/annotation-keys.ts';
import { BoundedMemo } from '../bounded-memo.ts';

export interface AppliedEnv {
  set: string[];
  removed: string[];
}

type Identity = Pick<Facts, 'annotations' | 'container'>;

/**
 * True when an env annotation has an entry for this container (an empty list or
 * serviceLinks: true count too): the runtime shim or precreate stage must then have run, and
 * left APPLIED_KEY = appliedDigest(facts). Throws EnvhookError on an invalid annotation.
 */
export function envRequested(facts: Identity): boolean {
  return envRequest(facts) !== undefined;
}

/** The pod carries an env annotation at all, for this container or another. */
export function envAnnotated(facts: Identity): boolean {
  return ENV_KEYS.some((k) => facts.annotations[k] !== undefined);
}

/**
 * The value of APPLIED_KEY: a digest of the container name and the three annotations' raw text,
 * so the hook can tell that the applied mark belongs to these very annotations. It is a
 * consistency check against a misconfigured node, not a security boundary: the pod author
 * who could forge it could as well leave the annotations out.
 */
export function appliedDigest(facts: Identity): string {
  const input = JSON.stringify([facts.container ?? null, ...ENV_KEYS.map((k) => facts.annotations[k] ?? null)]);
  let digest = digests.get(input);
  if (digest === undefined) {
    digest = 'sha256:' + sha256Hex(input).slice(0, 32);
    digests.set(input, digest, input.length);
  }
  return digest;
}

/**
 * The digests of the last inputs: a pod's containers and restarts repeat the same annotations,
 * and the resident NRI plugin computed the same SHA-256 at each (about a twentieth of a typical
 * CreateContainer's time). Bounded in entries and in the inputs' length (oldest dropped first).
 */
const digests = new BoundedMemo<string>(256, 1 << 20);

const NEEDED =
  'the runtime shim (hooks/envhook-runtime in place of runc) or the precreate hook (Podman) is needed; ' +
  'the createRuntime hook alone cannot set variables';

/**
 * The hook stage's check (docs/design.md#failures): env asked for this container by annotations but not applied
 * before the runtime's create means a hook-only registration; the container would start without
 * its variables, so the start fails instead, saying what is missing.
 */
export function checkApplied(facts: Identity, requested = envRequested(facts)): void {
  if (!requested) return;
  const applied = facts.annotations[APPLIED_KEY];
  if (applied === appliedDigest(facts)) return;
  const keys = ENV_KEYS.filter((k) => facts.annotations[k] !== undefined);
  const by = `${keys.length > 1 ? 'annotations' : 'annotation'} ${keys.map((k) => `"${k}"`).join(', ')}`;
  // A mark for other annotations: forged by the pod author, or the annotations changed after the shim ran.
  const why = applied === undefined ? '' : ` ("${APPLIED_KEY}" belongs to other annotations)`;
  throw new EnvhookError(`env requested by ${by} was not applied before the runtime's create${why}: ${NEEDED}`);
}

/** The value of APPLIED_ENV_KEY: `{"set":[…],"removed":[…]}`, each name once. */
export function appliedEnvMark(names: AppliedEnv): string {
  return JSON.stringify({ set: [...new Set(names.set)], removed: [...new Set(names.removed)] });
}

/** The names mark of a spec's annotations, or undefined when it has none. Throws EnvhookError. */
export function readAppliedEnv(annotations: Record<string, unknown> | undefined, where: string): AppliedEnv | undefined {
  const text = annotations?.[APPLIED_ENV_KEY];
  if (text === undefined) return undefined;
  const bad = () => new EnvhookError(`${where}: annotation "${APPLIED_ENV_KEY}" is not {"set":[names],"removed":[names]}`);
  if (typeof text !== 'string') throw bad();
  let mark: unknown;
  try {
    mark = JSON.parse(text);
  } catch {
    // V8's message quotes its input: ours names the annotation only.
    throw bad();
  }
  const names = (v: unknown): v is string[] => Array.isArray(v) && v.every((n) => typeof n === 'string' && n !== '' && !n.includes('='));
  if (mark === null || typeof mark !== 'object' || Array.isArray(mark)) throw bad();
  const { set, removed } = mark as Record<string, unknown>;
  if (!names(set) || !names(removed)) throw bad();
  return { set, removed };
}
