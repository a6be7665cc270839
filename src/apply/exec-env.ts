// The exec applier: the env of an exec'd process, as PID 1 got it. The names mark
// (plan/mark.ts, written by the config.json applier) says which variables envhook set and which
// it removed; the values come from the bundle's config.json, which holds PID 1's env. Pure: no
// file is read here (shim/exec.ts reads the process file and config.json, and writes).
import { EnvhookError } from '../errors.ts';
import { type AppliedEnv } from '../plan/mark.ts';
import { APPLIED_ENV_KEY } from '../k8s/annotation-keys.ts';

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
    if (!values.has(name))
      throw new EnvhookError(`${where}: variable ${JSON.stringify(name)} of annotation "${APPLIED_ENV_KEY}" is not in process.env`);
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
