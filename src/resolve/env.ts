// Env resolution for one container, in SPEC §2 order (last wins):
//   1. the process env the runtime built; 2. service-link removal; 3. envFrom files, in order;
//   4. env entries, in order (`value` expanded with $(VAR) over what is defined so far).
// The result keeps the runtime's list as it was for every untouched variable, replaces an
// overridden one in place (dropping later duplicates of that name, so the container sees one
// value whatever its libc picks), and appends new names in the order they were first set.
import { EnvhookError } from '../errors.ts';
import type { EnvFromSource, EnvVar } from '../k8s/annotations.ts';
import type { VolumeLocator } from '../k8s/volumes.ts';
import { expand } from './expand.ts';
import { serviceLinkNames } from './service-links.ts';
import { describeFile, EnvFiles, type ParseEnvFile } from './files.ts';

export interface EnvRequest {
  env: readonly EnvVar[];
  envFrom: readonly EnvFromSource[];
  removeServiceLinks: boolean;
}

/** Names and sources only: this is what logs and --dry-run show. */
export interface EnvSource { name: string; source: string }

export interface ResolvedEnv {
  env: string[];
  set: EnvSource[];
  removed: string[];
  /** Optional references whose file or key was missing: nothing was set for them. */
  skipped: EnvSource[];
}

export function resolveEnv(processEnv: readonly string[], req: EnvRequest, volumes: VolumeLocator, parse: ParseEnvFile): ResolvedEnv {
  const names = processEnv.map(nameOf);
  const removed = req.removeServiceLinks ? serviceLinkNames(names) : [];
  const removedSet = new Set(removed);
  const values = new Map<string, string>();
  const sources = new Map<string, string>();
  const skipped: EnvSource[] = [];
  // What $(VAR) can see: the runtime's variables (last duplicate wins, as runc does), then ours
  // as set so far. Built on the first expansion only: a spec of 35,000 variables with no
  // `value` entry to expand should not copy them all into a map.
  let visible: Map<string, string> | undefined;
  const lookup = (ref: string): string | undefined => {
    if (visible === undefined) {
      visible = new Map<string, string>();
      processEnv.forEach((entry, i) => {
        const eq = entry.indexOf('=');
        if (eq > 0 && !removedSet.has(names[i]!)) visible!.set(names[i]!, entry.slice(eq + 1));
      });
      for (const [name, value] of values) visible.set(name, value);
    }
    return visible.get(ref);
  };
  const setVar = (name: string, value: string, source: string): void => {
    values.set(name, value);
    visible?.set(name, value);
    sources.delete(name); // the plan lists a name where it was last set
    sources.set(name, source);
  };

  const files = new EnvFiles(volumes, parse);
  for (const src of req.envFrom) {
    const ref = src.fileRef;
    const vars = files.read(ref);
    const source = `envFrom ${describeFile(ref)}`;
    if (vars === undefined) skipped.push({ name: `${src.prefix ?? ''}*`, source: `${source} (optional, not found)` });
    else for (const [name, value] of vars) setVar(`${src.prefix ?? ''}${name}`, value, source);
  }
  for (const v of req.env) {
    if (v.value !== undefined) {
      setVar(v.name, expand(v.value, lookup), 'value');
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
  return {
    env: merge(processEnv, names, removedSet, values),
    set: [...sources].map(([name, source]) => ({ name, source })),
    // A removed name that an envFrom file or env entry sets again is not reported as removed.
    removed: removed.filter((name) => !values.has(name)),
    skipped,
  };
}

function nameOf(entry: string): string {
  const eq = entry.indexOf('=');
  return eq < 0 ? entry : entry.slice(0, eq);
}

function merge(processEnv: readonly string[], names: readonly string[], removed: ReadonlySet<string>, values: ReadonlyMap<string, string>): string[] {
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
  for (const [name, value] of values) if (!written.has(name)) out.push(`${name}=${value}`);
  return out;
}
