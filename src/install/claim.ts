// One install per runtime and mode on a node. Each prefix keeps its own state.json, so an install
// from another --prefix cannot see this one's record; what it can see are the runtime's files:
// envhook's block, drop-in, hooks.d file or NRI plugin wrapper name the prefix they run from (the
// front, the executable, the hooks directory). A prefix named there whose state.json records the
// same install and that file is the install the runtime runs: another install takes it over only
// when asked (--take-over), and an uninstall from a prefix whose files were taken over refuses
// (it would remove the other install's registration). docs/install.md#one-install-per-runtime-and-mode
import fs from 'node:fs';
import path from 'node:path';
import { EnvhookError } from '../errors.ts';
import { splitBlock } from './block.ts';
import { readHost, type Change } from './fsops.ts';
import { makeLayout, type Layout, type Runtime } from './layout.ts';
import type { InstallKey } from './mode.ts';
import { markedFiles, readState, type RuntimeRecord } from './state.ts';
import type { RuntimePlan } from './targets.ts';

export interface Claim {
  /** The other install's prefix. */
  prefix: string;
  /** The runtime's file that is that install's. */
  file: string;
  /** That install's record in its state.json. */
  record: RuntimeRecord;
}

/** An install taken over (--take-over): the note, the hashes of the files it wrote (not the admin's: no backup), and its plugin files this install does not write (removed: one plugin runs). */
export interface TakeOver {
  note: string;
  hashes: Record<string, string>;
  leftovers: Change[];
}

/** A pre-installed NRI plugin's file name: NN-envhook. */
const PLUGIN_FILE = /^[0-9]{2}-envhook$/;
/** A prefix as envhook's files name it: `P/envhook-runtime`, `P/envhook`, `P/hooks.d`, ending at a quote, a space or the line's end. */
const PREFIX_REF = /(\/[^\s"'=]*?)\/(?:envhook-runtime|envhook|hooks\.d)(?=["'\s]|$)/gm;

/**
 * The files where another prefix's install of the same runtime and mode would show, for an
 * install plan: the files it writes whole, the files its blocks go into, and the other
 * NN-envhook files of the NRI plugin directory (another --index).
 */
function planFiles(layout: Layout, rp: RuntimePlan): string[] {
  const files = [...rp.files.map((t) => t.file), ...rp.blocks.map((b) => b.file)];
  const dirs = new Set(files.filter((f) => PLUGIN_FILE.test(path.posix.basename(f))).map((f) => path.posix.dirname(f)));
  const siblings = [...dirs].flatMap((dir) =>
    listDir(layout, dir)
      .filter((n) => PLUGIN_FILE.test(n))
      .map((n) => path.posix.join(dir, n)),
  );
  return [...new Set([...files, ...siblings])];
}

function listDir(layout: Layout, dir: string): string[] {
  try {
    return fs.readdirSync(layout.real(dir));
  } catch {
    return [];
  }
}

/** The install of `key` under another prefix that one of `files` belongs to, if any. */
function claimedElsewhere(layout: Layout, runtime: Runtime, key: InstallKey, files: string[]): Claim | undefined {
  for (const file of files) {
    if (file.startsWith(layout.prefix + '/')) continue; // this prefix's own files name only it
    for (const prefix of prefixesNamed(layout, file)) {
      if (prefix === layout.prefix) continue;
      const rec = otherState(layout, runtime, prefix)?.runtimes[key];
      if (rec && (file in rec.files || markedFiles(rec).includes(file))) return { prefix, file, record: rec };
    }
  }
  return undefined;
}

/** The prefixes `file` names: in envhook's block only, for an admin's file that carries one. */
function prefixesNamed(layout: Layout, file: string): string[] {
  let text: string;
  try {
    text = readHost(layout, file)?.toString('utf8') ?? '';
    text = splitBlock(text, file).block ?? text;
  } catch {
    return []; // unreadable, or a broken block: the plan's own checks say so
  }
  return [...new Set([...text.matchAll(PREFIX_REF)].map((m) => path.posix.normalize(m[1]!)))];
}

function otherState(layout: Layout, runtime: Runtime, prefix: string) {
  try {
    return readState(makeLayout(runtime, { root: layout.root, prefix }));
  } catch {
    return undefined; // not an envhook prefix: nothing claims the file from there
  }
}

/** `containerd's runtime handler`, `CRI-O's NRI plugin`, `Podman's hooks`. */
function installWhat(runtime: Runtime, key: InstallKey): string {
  const name = { containerd: 'containerd', crio: 'CRI-O', podman: 'Podman' }[runtime];
  return `${name}'s ${key.endsWith('-nri') ? 'NRI plugin' : runtime === 'podman' ? 'hooks' : 'runtime handler'}`;
}

/** The uninstall command of the install under `prefix`. */
function uninstallCommand(layout: Layout, runtime: Runtime, key: InstallKey, prefix: string): string {
  const root = layout.root === '/' ? '' : ` --root ${layout.root}`;
  return `envhook uninstall --runtime ${runtime}${key.endsWith('-nri') ? ' --mode nri' : ''}${root} --prefix ${prefix}`;
}

/** Install: refuse to take over another prefix's install unless asked (--take-over); what taking it over changes. */
export function takeOver(layout: Layout, runtime: Runtime, key: InstallKey, rp: RuntimePlan, asked: boolean): TakeOver | undefined {
  const files = planFiles(layout, rp);
  const claim = claimedElsewhere(layout, runtime, key, files);
  if (!claim) return undefined;
  const what = installWhat(runtime, key);
  if (!asked)
    throw new EnvhookError(
      `${what} is already installed under ${claim.prefix} (in ${claim.file}): uninstall that one first (${uninstallCommand(layout, runtime, key, claim.prefix)}), or pass --take-over to move it under ${layout.prefix}`,
    );
  const written = new Set(rp.files.map((t) => t.file));
  const leftovers = files
    .filter((f) => f in claim.record.files && !written.has(f))
    .map((file): Change => ({ file, before: readHost(layout, file), after: undefined, mode: 0o644 }));
  return {
    note: `took ${what} over from the install under ${claim.prefix} (${claim.file}): that install's uninstall now refuses; remove ${claim.prefix} by hand to keep this one`,
    hashes: claim.record.files,
    leftovers,
  };
}

/** Uninstall: refuse when the runtime's files of this install now belong to another prefix's (taken over). */
export function refuseTakenOver(layout: Layout, runtime: Runtime, key: InstallKey, files: string[]): void {
  const claim = claimedElsewhere(layout, runtime, key, files);
  if (!claim) return;
  throw new EnvhookError(
    `${installWhat(runtime, key)} in ${claim.file} is the install's under ${claim.prefix} now, which took it over: uninstall that one first (${uninstallCommand(layout, runtime, key, claim.prefix)}), or remove ${layout.prefix} by hand to keep it`,
  );
}
