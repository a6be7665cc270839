// Env resolution for one container, in the order of docs/design.md#resolution-order (last wins):
//   1. the process env the runtime built; 2. service-link removal; 3. envFrom sources (env
//      files, volume directories), in order;
//   4. env entries, in order (`value` expanded with $(VAR) over what is defined so far; a
//      fileKeyRef key or a fileRef whole file as it is).
// The result keeps the runtime's list as it was for every untouched variable, replaces an
// overridden one in place (dropping later duplicates of that name, so the container sees one
// value whatever its libc picks), and appends new names in the order they were first set.
import { EnvhookError } from '../errors.ts';
import type { EnvFromSource, EnvVar } from '../k8s/annotations.ts';
import type { VolumeLocator } from '../k8s/volumes.ts';
import { expand, ExpansionTooLong } from './expand.ts';
import { serviceLinkNames } from './service-links.ts';
import { describeDir, describeFile, EnvFiles, type ParseEnvFile } from './files.ts';

/**
 * Linux execve limits (MAX_ARG_STRLEN; at most 3/4 of the 8 MiB stack limit for argv and envp
 * together): a longer `NAME=value`, or a larger environment, can never reach the process, so
 * such a start fails here with a clear message instead of as E2BIG in the runtime, and a pod
 * author cannot make envhook build (and write) hundreds of MiB through $(VAR) expansion.
 */
const MAX_ENV_ENTRY_BYTES = 128 * 1024 - 1;
const MAX_ENV_TOTAL_BYTES = 6 * 1024 * 1024;

export interface EnvRequest {
  env: readonly EnvVar[];
  envFrom: readonly EnvFromSource[];
  removeServiceLinks: boolean;
}

/** Names and sources only: this is what logs and --dry-run show. */
interface EnvSource {
  name: string;
  source: string;
  /** A volumeRef file whose name is no variable name (skipped; `name` is JSON-quoted). */
  invalidName?: boolean;
}

export interface ResolvedEnv {
  /** The whole resulting process env (the config.json and exec appliers write it). */
  env: string[];
  /** Each variable set, with its final value, in the order it was first set (the NRI applier). */
  values: ReadonlyMap<string, string>;
  set: EnvSource[];
  removed: string[];
  /** Optional references whose file or key was missing: nothing was set for them. */
  skipped: EnvSource[];
}

export function resolveEnv(processEnv: readonly string[], req: EnvRequest, volumes: VolumeLocator, parse: ParseEnvFile): ResolvedEnv {
  const scope = envScope(processEnv, req.removeServiceLinks);
  const files = new EnvFiles(volumes, parse);
  try {
    readEnvFrom(req.envFrom, files, scope);
    setEnv(req.env, files, scope, processEnv);
  } finally {
    files.close();
  }
  return resolved(scope);
}

/** The env entries, in order: a `value` expanded, a fileRef's whole file, a fileKeyRef's key. */
function setEnv(env: readonly EnvVar[], files: EnvFiles, { lookup, setVar, skipped }: EnvScope, processEnv: readonly string[]): void {
  let total: number | undefined; // size of the environment, counted on the first `value` only
  for (const v of env) {
    if (v.value !== undefined) {
      let value: string;
      try {
        value = expand(v.value, lookup, MAX_ENV_ENTRY_BYTES);
      } catch (err) {
        if (err instanceof ExpansionTooLong) throw tooLong(v.name);
        throw err;
      }
      if (Buffer.byteLength(v.name) + 1 + Buffer.byteLength(value) > MAX_ENV_ENTRY_BYTES) throw tooLong(v.name);
      // An upper bound of the final size (a replaced variable is counted twice): enough to stop
      // a request that adds entry after entry near the limit.
      total ??= processEnv.reduce((n, e) => n + Buffer.byteLength(e) + 1, 0);
      total += Buffer.byteLength(v.name) + Buffer.byteLength(value) + 2;
      if (total > MAX_ENV_TOTAL_BYTES) throw totalTooLarge();
      setVar(v.name, value, 'value');
      continue;
    }
    if (v.valueFrom!.fileRef) {
      const ref = v.valueFrom!.fileRef;
      const value = files.value(ref);
      if (value !== undefined) setVar(v.name, value, `fileRef ${describeFile(ref)}`);
      else skipped.push({ name: v.name, source: `fileRef ${describeFile(ref)} (optional, not found)` });
      continue;
    }
    const ref = v.valueFrom!.fileKeyRef;
    const source = `${describeFile(ref)}: key ${JSON.stringify(ref.key)}`;
    const vars = files.read(ref);
    const value = vars?.get(ref.key);
    if (value !== undefined) setVar(v.name, value, source);
    else if (vars === undefined) skipped.push({ name: v.name, source: `${source} (optional, file not found)` });
    else if (ref.optional) skipped.push({ name: v.name, source: `${source} (optional, key not found)` });
    else throw new EnvhookError(`${source} not found`);
  }
}

/** One resolution's working state: the runtime's names, what is set so far, and $(VAR)'s view. */
interface EnvScope {
  processEnv: readonly string[];
  names: string[];
  removed: string[];
  removedSet: Set<string>;
  values: Map<string, string>;
  /** Where each name was last set. */
  sources: Map<string, string>;
  skipped: EnvSource[];
  /** What $(VAR) can see. */
  lookup: (ref: string) => string | undefined;
  setVar: (name: string, value: string, source: string) => void;
}

/** The runtime's names, the service links to remove, and the two accessors the loops use. */
function envScope(processEnv: readonly string[], removeServiceLinks: boolean): EnvScope {
  const names = processEnv.map(nameOf);
  const removed = removeServiceLinks ? serviceLinkNames(names) : [];
  const removedSet = new Set(removed);
  const values = new Map<string, string>();
  const sources = new Map<string, string>();
  // What $(VAR) can see: ours as set so far, else the runtime's variables (last duplicate wins,
  // as runc does). The runtime's are put in a map on the first expansion only: a spec of 35,000
  // variables with no `value` entry to expand should not copy them all into a map.
  let runtime: Map<string, string> | undefined;
  const lookup = (ref: string): string | undefined => {
    const ours = values.get(ref);
    if (ours !== undefined) return ours;
    if (runtime === undefined) {
      runtime = new Map<string, string>();
      processEnv.forEach((entry, i) => {
        const eq = entry.indexOf('=');
        if (eq > 0 && !removedSet.has(names[i]!)) runtime!.set(names[i]!, entry.slice(eq + 1));
      });
    }
    return runtime.get(ref);
  };
  const setVar = (name: string, value: string, source: string): void => {
    values.set(name, value);
    sources.delete(name); // the plan lists a name where it was last set
    sources.set(name, source);
  };
  return { processEnv, names, removed, removedSet, values, sources, skipped: [], lookup, setVar };
}

/** The envFrom sources, in order: an env file's variables, or a volume directory's files. */
function readEnvFrom(envFrom: readonly EnvFromSource[], files: EnvFiles, { setVar, skipped }: EnvScope): void {
  for (const src of envFrom) {
    if (src.volumeRef) {
      const source = `envFrom ${describeDir(src.volumeRef)}`;
      const dir = files.dir(src.volumeRef, src.prefix ?? '');
      if (dir === undefined) skipped.push({ name: `${src.prefix ?? ''}*`, source: `${source} (optional, not found)` });
      for (const name of dir?.invalid ?? [])
        skipped.push({
          name: JSON.stringify(name),
          source: `${source} (not a variable name: skipped, as the kubelet skips such keys)`,
          invalidName: true,
        });
      dir?.vars.forEach((value, name) => setVar(name, value, source));
      continue;
    }
    const ref = src.fileRef;
    const vars = files.read(ref);
    const source = `envFrom ${describeFile(ref)}`;
    if (vars === undefined) skipped.push({ name: `${src.prefix ?? ''}*`, source: `${source} (optional, not found)` });
    else vars.forEach((value, name) => setVar(`${src.prefix ?? ''}${name}`, value, source));
  }
}

/** The merged process env (checked against the kernel's limit) and what the plan reports. */
function resolved(scope: EnvScope): ResolvedEnv {
  const { processEnv, names, removed, removedSet, values, sources, skipped } = scope;
  const env = withinLimit(scope) ?? merge(processEnv, names, removedSet, values);
  const set: EnvSource[] = [];
  sources.forEach((source, name) => set.push({ name, source }));
  return {
    env,
    values,
    set,
    // A removed name that an envFrom file or env entry sets again is not reported as removed.
    removed: removed.filter((name) => !values.has(name)),
    skipped,
  };
}

/**
 * Throws when the merged env would pass the kernel's limit. A bound by lengths first (a UTF-16
 * unit is at most 3 bytes of UTF-8, and the runtime's entries counted whole): the merged env, and
 * the exact size, only when that bound is near the limit. Returns the merged env if it made it.
 */
function withinLimit({ processEnv, names, removedSet, values }: EnvScope): string[] | undefined {
  let bound = 0;
  for (const e of processEnv) bound += 3 * e.length + 1;
  values.forEach((value, name) => (bound += 3 * (name.length + 1 + value.length) + 1));
  if (bound <= MAX_ENV_TOTAL_BYTES) return undefined;
  const env = merge(processEnv, names, removedSet, values);
  if (env.reduce((n, e) => n + Buffer.byteLength(e) + 1, 0) > MAX_ENV_TOTAL_BYTES) throw totalTooLarge();
  return env;
}

function tooLong(name: string): EnvhookError {
  return new EnvhookError(
    `env ${JSON.stringify(name)}: longer than ${MAX_ENV_ENTRY_BYTES} bytes after $(VAR) expansion (the kernel's limit for one variable)`,
  );
}

function totalTooLarge(): EnvhookError {
  return new EnvhookError(
    `the container's environment would be larger than ${MAX_ENV_TOTAL_BYTES} bytes (the kernel's limit for argv and env)`,
  );
}

function nameOf(entry: string): string {
  const eq = entry.indexOf('=');
  return eq < 0 ? entry : entry.slice(0, eq);
}

function merge(
  processEnv: readonly string[],
  names: readonly string[],
  removed: ReadonlySet<string>,
  values: ReadonlyMap<string, string>,
): string[] {
  const out: string[] = [];
  const written = new Set<string>();
  processEnv.forEach((entry, i) => {
    const name = names[i]!;
    if (values.has(name)) {
      if (!written.has(name)) out.push(`${name}=${values.get(name)!}`);
      written.add(name);
    } else if (!removed.has(name)) {
      out.push(entry);
    }
  });
  values.forEach((value, name) => {
    if (!written.has(name)) out.push(`${name}=${value}`);
  });
  return out;
}
