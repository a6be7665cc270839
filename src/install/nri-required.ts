// `install --mode nri --nri-required`: envhook a required plugin of NRI's default validator
// (containerd 2.2, CRI-O 1.34), so that the runtime creates no container while envhook is not
// connected. The validator checks the bare plugin name as well as NN-name: the bare one is
// required, so that another --index still satisfies it. The required list is a TOML array,
// which a later file replaces whole: envhook writes the union of the list in force and its own
// name, and refuses when a file read after its own would replace that list.
import { EnvhookError } from '../errors.ts';

export const REQUIRED_PLUGIN = 'envhook';

/** The runtimes' first versions with NRI's default validator. */
const RUNTIMES = {
  containerd: { name: 'containerd', bin: 'containerd', since: [2, 2] },
  crio: { name: 'CRI-O', bin: 'crio', since: [1, 34] },
} as const;

/** Refuses --nri-required for a runtime without the validator, or with no binary to tell its version. */
export function refuseWithoutValidator(runtime: keyof typeof RUNTIMES, version: string | undefined): void {
  const { name, bin, since } = RUNTIMES[runtime];
  const needs = `--nri-required needs ${name} ${since.join('.')} or later (NRI's default validator)`;
  if (version === undefined) throw new EnvhookError(`${needs}; no ${bin} binary to ask for its version: name it with --${bin} PATH`);
  if (olderThan(version, since)) {
    throw new EnvhookError(`${needs}; ${name} ${version} has none: install without --nri-required, or upgrade ${name}`);
  }
}

/** `version` (as the binary prints it: 2.1.9, 1.6.20~ds1) is older than major.minor. */
export function olderThan(version: string, [major, minor]: readonly [number, number]): boolean {
  const [a, b] = version.split('.').map((n) => parseInt(n, 10));
  return a! < major || (a === major && b! < minor);
}

/** The string items of a TOML value (a list of plugin names). */
export function names(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}

/** The names in force, then envhook's when absent. */
export function withRequired(existing: string[]): string[] {
  return existing.includes(REQUIRED_PLUGIN) ? existing : [...existing, REQUIRED_PLUGIN];
}

/** A TOML array of strings, as an admin writes one. */
export function tomlList(items: string[]): string {
  return `[${items.map((s) => JSON.stringify(s)).join(', ')}]`;
}

export const requiredNote = (runtime: string) =>
  `envhook is a required NRI plugin: ${runtime} creates no container (pod sandboxes still start) while envhook is not connected`;
