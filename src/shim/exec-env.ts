// The env of an exec'd process, as PID 1 got it: the names mark (modify/applied-env.ts) says
// which variables envhook set and which it removed; the values come from the bundle's
// config.json, which holds PID 1's env. Pure functions: no file is read here.
import { EnvhookError } from '../errors.ts';
import { APPLIED_ENV_KEY, type AppliedEnv } from '../modify/applied-env.ts';

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

function nameOf(entry: string): string {
  const eq = entry.indexOf('=');
  return eq < 0 ? entry : entry.slice(0, eq);
}

/**
 * `env` (the exec process's, as the runtime gave it) with envhook's changes: every set name
 * takes its value from `specEnv` (config.json's process env), in place of its first entry (later
 * duplicates dropped, as at create) or appended in the mark's order; every removed name goes.
 * Every other entry, the exec request's own included, stays as it is, in its place.
 */
export function execEnv(env: readonly string[], mark: AppliedEnv, specEnv: readonly string[], where: string): string[] {
  const wanted = new Set(mark.set);
  const values = new Map<string, string>();
  for (const entry of specEnv) {
    const name = nameOf(entry);
    if (wanted.has(name) && !values.has(name)) values.set(name, entry);
  }
  for (const name of mark.set) {
    if (!values.has(name)) throw new EnvhookError(`${where}: variable ${JSON.stringify(name)} of annotation "${APPLIED_ENV_KEY}" is not in process.env`);
  }
  const removed = new Set(mark.removed);
  const out: string[] = [];
  const written = new Set<string>();
  for (const entry of env) {
    const name = nameOf(entry);
    if (values.has(name)) {
      if (!written.has(name)) out.push(values.get(name)!);
      written.add(name);
    } else if (!removed.has(name)) {
      out.push(entry);
    }
  }
  for (const name of wanted) {
    if (!written.has(name)) out.push(values.get(name)!);
    written.add(name);
  }
  return out;
}
