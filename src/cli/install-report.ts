// What `envhook install` / `uninstall` did (with --dry-run: would do), as the admin reads it: the
// lines on stdout, or with --json one object (docs/install.md#json-output). Paths, verbs, sizes and
// hashes only: install writes no env file content, and none is read here.
import type { Layout } from '../install/layout.ts';
import { changeVerb, describeChanges, reportedChanges, savedAs, sha256, type Change } from '../install/fsops.ts';

/**
 * The running envhook nri the command spoke to after the files: stopped (uninstall), handed over
 * to one started from the new files (install: `to`), or still on the old files (install: `why`).
 */
export interface PluginSeen {
  socket: string;
  pid: number;
  state: 'stopped' | 'handed-over' | 'running-previous-files';
  to?: number;
  why?: string;
}

export interface Outcome {
  command: 'install' | 'uninstall';
  runtime: string;
  mode: string | null;
  root: string;
  dryRun: boolean;
  layout: Layout;
  changes: Change[];
  removedDirs: string[];
  notes: string[];
  checked: string | null;
  nothing: string | null;
  next: string[];
  plugins: PluginSeen[];
  warnings: string[];
  /** uninstall of the last NRI install: the stopped plugin's run state removed (would be, with --dry-run). */
  removedState: string[];
}

/** The lines install has always printed, in their order. */
export function outcomeText(o: Outcome): string {
  const would = o.dryRun ? 'would ' : '';
  const described = describeChanges(o.layout, o.changes, { dryRun: o.dryRun, diffs: o.dryRun });
  const lines = [
    // a node seen from elsewhere (a DaemonSet's /host, a scratch root): say where the paths are
    o.root !== '/' && described !== '' ? `paths below are the node's, under --root ${o.root}` : '',
    described,
    ...o.removedDirs.map((d) => `${would}remove directory ${d} (install created it)`),
    ...o.notes.map((n) => `note: ${n}`),
    o.checked ?? '',
    o.nothing !== null ? `nothing changed: ${o.nothing}` : '',
    o.next.length ? `next:\n${o.next.map((l) => `  ${l}`).join('\n')}` : '',
    ...o.plugins.map((p) => pluginLine(p, o.runtime)),
    ...o.removedState.map((p) => `${would}remove ${p} (the NRI plugin's run state${o.dryRun ? ', once the plugin is stopped' : ''})`),
    ...o.warnings.map((w) => `warning: ${w}`),
  ].filter((l) => l !== '');
  return lines.length ? lines.join('\n') + '\n' : '';
}

function pluginLine(p: PluginSeen, runtime: string): string {
  if (p.state === 'stopped') return `stopped the running envhook nri for ${p.socket} (pid ${p.pid})`;
  const service = runtime === 'crio' ? 'crio' : 'containerd';
  if (p.state === 'handed-over')
    return (
      `upgraded without a restart of ${service}: envhook nri (pid ${p.pid}) handed over to the one started from the new files (pid ${p.to}) on ${p.socket}, ` +
      `no container created without its env; it is registered as an external plugin until ${service} restarts and starts the new file itself`
    );
  // install over a running plugin it could not upgrade: it goes on from the previous files until the runtime restarts
  return (
    `note: envhook nri (pid ${p.pid}) is running for ${p.socket} from the files before this install (${p.why ?? 'not upgraded'}): it goes on until ${service} restarts ` +
    `(systemctl restart ${service}); the new one then takes over from it (docs/nri-guarantees.md, "An upgrade of the pre-installed plugin")`
  );
}

/** install --json / uninstall --json: every key always present (null or [] where there is nothing). */
export function outcomeJson(o: Outcome): string {
  const files = reportedChanges(o.changes).map((c) => ({
    path: c.file,
    action: changeVerb(c),
    backup: savedAs(o.layout, c) ?? null,
    bytes: c.after?.length ?? null,
    sha256: c.after ? sha256(c.after) : null,
    note: c.note ?? null,
  }));
  const report = {
    command: o.command,
    runtime: o.runtime,
    mode: o.mode,
    root: o.root,
    prefix: o.layout.prefix,
    dryRun: o.dryRun,
    changed: o.nothing === null,
    files,
    removedDirectories: o.removedDirs,
    notes: o.notes,
    checked: o.checked,
    nothing: o.nothing,
    next: o.next,
    plugins: o.plugins,
    removedRunState: o.removedState,
    warnings: o.warnings,
  };
  return JSON.stringify(report, null, 2) + '\n';
}
