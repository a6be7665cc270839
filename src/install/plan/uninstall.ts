// `envhook uninstall`: what the installs recorded in state.json, taken back. Without --mode, every
// install recorded for the runtime (the runtime handler and the NRI plugin); with --mode, that
// one, and when only the other is recorded the answer names the command that removes it.
// Nothing runnable is left pointing at what uninstall removes: a file envhook placed and the admin
// edited since is kept as the admin's, but when it is executable or names a removed file (the NRI
// plugin wrapper, a hooks.d file), it is moved out of the runtime's reach, not executable.
import { refuseBadRoot } from '../config-read.ts';
import path from 'node:path';
import { makeLayout, type Layout, type Runtime } from '../layout.ts';
import { deepestFirst, readHost, type Change } from '../fsops.ts';
import { removeFile } from '../remove-file.ts';
import { markedFiles, readState, stateChange, type RuntimeRecord, type State } from '../state.ts';
import { adminFileChange } from '../admin-file.ts';
import { installKey, type InstallKey } from '../mode.ts';
import type { InstallOptions, Plan } from './install-plan.ts';
import { NRI_DEFAULT_SOCKET } from '../nri-plugin.ts';
import { refuseTakenOver } from '../claim.ts';
import { WATCH_STOP, WATCH_UNIT } from '../watch-unit.ts';

export function planUninstall(opts: Pick<InstallOptions, 'runtime' | 'root' | 'prefix' | 'mode'>): Plan {
  const layout = makeLayout(opts.runtime, opts);
  refuseBadRoot(layout.root);
  const state = readState(layout);
  const stateBefore = readHost(layout, layout.state);
  const keys = opts.mode ? [installKey(opts.runtime, opts.mode)] : [installKey(opts.runtime, 'nri'), installKey(opts.runtime, 'shim')];
  const removed = keys.filter((k) => state.runtimes[k] !== undefined);
  if (removed.length === 0) return { layout, changes: [], next: [], notes: [], ...otherMode(layout, opts, state) };
  const records = removed.map((k) => state.runtimes[k]!);
  for (const k of removed)
    refuseTakenOver(layout, opts.runtime, k, [...markedFiles(state.runtimes[k]!), ...Object.keys(state.runtimes[k]!.files)]);
  const next: State = { version: 1, runtimes: { ...state.runtimes } };
  for (const k of removed) delete next.runtimes[k];
  const kept = Object.values(next.runtimes).filter((r) => r !== undefined);

  // configs and hooks.d files first, the executables they name last: the reverse of install
  const changes: Change[] = [];
  for (const file of new Set(records.flatMap(markedFiles))) changes.push(adminFileChange(layout, file, records, undefined, kept));
  const files = new Map<string, string>();
  for (const rec of records)
    for (const [file, hash] of Object.entries(rec.files).reverse()) if (!kept.some((r) => file in r.files)) files.set(file, hash);
  for (const [file, hash] of files) changes.push(removeFile(layout, file, hash, [...files.keys()]));

  // directories install created: removed when empty, or handed on to an install with files in them
  const dirs = [...new Set(records.flatMap((r) => r.dirs ?? []))].filter((d) => !kept.some((r) => r.dirs?.includes(d)));
  for (const [k, rec] of Object.entries(next.runtimes) as [InstallKey, RuntimeRecord][]) {
    const inside = dirs.filter((d) => [...Object.keys(rec.files), ...markedFiles(rec)].some((f) => f.startsWith(d + '/')));
    if (inside.length) next.runtimes[k] = { ...rec, dirs: [...new Set([...(rec.dirs ?? []), ...inside])] };
  }
  changes.push(stateChange(layout, next, stateBefore));
  const stopPlugins = [
    ...new Set(
      records
        .flatMap((r) => Object.keys(r.files))
        .filter((f) => PLUGIN_FILE.test(path.posix.basename(f)))
        .map((f) => wrapperSocket(readHost(layout, f))),
    ),
  ];
  return {
    layout,
    changes,
    next: [...restartNext(opts.runtime, removed, records), ...(files.has(WATCH_UNIT) ? [WATCH_STOP] : [])],
    notes: [],
    dirs: deepestFirst(dirs),
    ...(stopPlugins.length ? { stopPlugins } : {}),
  };
}

/**
 * The running runtime keeps the configuration it started with: the handler, or the NRI settings
 * install added, until it restarts (Podman reads its files at every run: nothing to do).
 */
function restartNext(runtime: Runtime, removed: InstallKey[], records: RuntimeRecord[]): string[] {
  if (runtime === 'podman' || !records.some((r) => r.blocks.length > 0 || (r.edits ?? []).length > 0)) return [];
  const what = removed.includes(runtime as InstallKey) ? 'the runtime handler "envhook"' : "the NRI settings envhook's install added";
  if (runtime === 'crio') return [`restart CRI-O: systemctl restart crio (the running crio still has ${what})`];
  return [`restart containerd: systemctl restart containerd (the running containerd still has ${what})`];
}

/** A pre-installed plugin's file: NN-envhook. */
const PLUGIN_FILE = /^[0-9]{2}-envhook$/;

/**
 * The NRI socket a plugin wrapper names (`exec … nri --socket '…'`), the one its running
 * envhook nri holds the instance lock for; the default for a wrapper that names none (written
 * by an envhook before the supervisor) or is gone.
 */
export function wrapperSocket(text: Buffer | undefined): string {
  const m = text && /^exec .* nri --socket '((?:[^']|'\\'')*)'/m.exec(text.toString('utf8'));
  return m ? m[1]!.replaceAll("'\\''", "'") : NRI_DEFAULT_SOCKET;
}

/** `--mode X` when only the other mode is installed: the command that removes that one. */
function otherMode(layout: Layout, opts: Pick<InstallOptions, 'runtime' | 'root' | 'prefix' | 'mode'>, state: State): { nothing?: string } {
  const other = opts.mode === 'nri' ? 'shim' : 'nri';
  if (!opts.mode || !state.runtimes[installKey(opts.runtime, other)]) return {};
  const root = layout.root === '/' ? '' : ` --root ${layout.root}`;
  return {
    nothing: `envhook is installed for ${opts.runtime} as the ${other === 'nri' ? 'NRI plugin' : 'runtime handler'} under ${layout.prefix}, not as the ${opts.mode === 'nri' ? 'NRI plugin' : 'runtime handler'}: envhook uninstall --runtime ${opts.runtime} --mode ${other}${root} --prefix ${layout.prefix}`,
  };
}
