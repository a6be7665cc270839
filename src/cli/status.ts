// `envhook status [--json]`: is envhook installed (per runtime, which modes), is the NRI plugin
// running and registered, since when, with which runtime and NRI version, what it adjusted,
// refused and missed, its last error. Read from the install state (<prefix>/state.json) and the
// supervisor's status file (<runDir>/nri-status.json): names, versions, times and counts only.
// Exit status 1, with the reason as one line on stderr, when the plugin should be connected
// (NRI mode installed, or a supervisor running) and is not.
import path from 'node:path';
import type { Command } from 'commander';
import { oneLine } from '../errors.ts';
import { DEFAULT_PREFIX, makeLayout, RUNTIMES } from '../install/layout.ts';
import { readState } from '../install/state.ts';
import { procStat } from '../nri/proc-stat.ts';
import { readStatus, statusPath, type NriStatus } from '../nri/status-file.ts';
import { loadSettings } from '../settings.ts';

interface StatusOptions {
  json?: boolean;
  root: string;
  prefix: string;
  runDir?: string;
}

export type PluginState = 'connected' | 'disconnected' | 'stale' | 'absent';

/** What `--json` prints: every key always present (null where there is nothing). */
export interface StatusReport {
  /** runtime → the modes installed for it ("shim", "nri"), from the install state. */
  installed: Record<string, string[]>;
  /** connected / disconnected (supervisor running) / stale (its supervisor gone: pid gone or another process's) / absent (no status file). */
  nri: PluginState;
  ok: boolean;
  /** Why not ok, one line; null when ok. */
  problem: string | null;
  statusFile: string;
  /** The status file as the supervisor wrote it (src/nri/status-file.ts), or null. */
  status: NriStatus | null;
}

export function registerStatus(program: Command): void {
  program
    .command('status')
    .description('is envhook installed; is its NRI plugin connected, since when, to what; what it adjusted, refused, missed')
    .option('--json', 'print one JSON object (keys: docs/nri-status.md)')
    .option('--root <dir>', 'host root: the install state, the status file and /proc are read under it', '/')
    .option('--prefix <dir>', "envhook's own directory on the host (install --prefix)", DEFAULT_PREFIX)
    .option('--run-dir <dir>', 'where envhook nri writes nri-status.json (default /run/envhook)')
    .action((opts: StatusOptions) => {
      const report = statusReport(opts);
      process.stdout.write(opts.json ? JSON.stringify(report, null, 2) + '\n' : renderReport(report, Date.now()));
      if (!report.ok) {
        process.stderr.write(`envhook: ${report.problem}\n`);
        process.exitCode = 1;
      }
    });
}

export function statusReport(opts: StatusOptions): StatusReport {
  const root = path.resolve(opts.root);
  // state.json's place depends on the prefix only, not on the runtime the layout is made for.
  const state = readState(makeLayout('containerd', { root, prefix: opts.prefix }));
  const installed: Record<string, string[]> = {};
  for (const rt of RUNTIMES) {
    const modes = (['shim', 'nri'] as const).filter((m) => Object.hasOwn(state.runtimes, m === 'nri' ? `${rt}-nri` : rt));
    if (modes.length) installed[rt] = modes;
  }
  const nriInstalled = Object.values(installed).some((m) => m.includes('nri'));
  const runDir = loadSettings({ runDir: opts.runDir }).runDir!;
  const statusFile = statusPath(runDir);
  const status = readStatus(path.join(root, runDir)) ?? null;
  let nri: PluginState = 'absent';
  if (status) nri = !supervisorRuns(root, status) ? 'stale' : status.connected ? 'connected' : 'disconnected';
  // Connected is expected where NRI mode is installed, and of any supervisor running (a DaemonSet
  // runs `envhook nri` without an install); a file left by one that is gone, with NRI mode not
  // installed, is history, not a failure.
  let problem: string | null = null;
  if (nri === 'disconnected') problem = `NRI plugin not connected since ${status!.since}`;
  else if (nriInstalled && nri === 'absent') problem = `NRI plugin installed but not running: no status file ${statusFile}`;
  else if (nriInstalled && nri === 'stale') problem = `NRI plugin installed but not running: its supervisor (pid ${status!.pid}) is gone`;
  return { installed, nri, ok: problem === null, problem, statusFile, status };
}

/**
 * The status file's supervisor still runs: its pid is there with the start time the file
 * recorded (a pid reused after the supervisor died names another process). A file from before
 * the start time was recorded: the pid alone.
 */
function supervisorRuns(root: string, status: NriStatus): boolean {
  const stat = procStat(status.pid, path.join(root, 'proc'));
  return stat !== undefined && (status.pidStartTicks === undefined || stat.startTicks === status.pidStartTicks);
}

export function renderReport(r: StatusReport, now: number): string {
  const lines: string[] = [];
  const inst = Object.entries(r.installed).map(([rt, modes]) => `${rt} (${modes.join(', ')})`);
  lines.push(`installed: ${inst.length ? inst.join(', ') : 'nothing'}`);
  const s = r.status;
  if (!s) {
    lines.push(`nri plugin: not running (no status file ${r.statusFile})`);
    return lines.join('\n') + '\n';
  }
  const head =
    r.nri === 'stale'
      ? `not running: supervisor pid ${s.pid} is gone (last known below)`
      : `${r.nri === 'connected' ? 'connected' : 'not connected'} since ${s.since} (${ago(s.since, now)})`;
  lines.push(`nri plugin: ${oneLine(s.plugin)} ${head}`);
  if (s.runtime)
    lines.push(
      `  runtime: ${oneLine(s.runtime.name)} ${oneLine(s.runtime.version)}, NRI ${s.nriVersion === undefined ? 'version not given' : oneLine(s.nriVersion)}`,
    );
  lines.push(`  connection: ${s.socket === undefined ? "the runtime's (pre-installed plugin)" : `socket ${oneLine(s.socket)}`}`);
  lines.push(
    `  supervisor: pid ${s.pid}, started ${s.startedAt}${s.workerPid === undefined ? ', no worker' : `, worker pid ${s.workerPid}`}`,
  );
  const c = s.counts;
  lines.push(
    `  containers: ${c.adjusted} adjusted, ${c.empty} without envhook, ${c.refused} refused, ${c.errors} errors, ${c.missed} missed, ${c.evicted} evicted${c.evictionsFailed ? ` (${c.evictionsFailed} evictions failed)` : ''}`,
  );
  lines.push(
    `  registrations: ${c.registrations}, worker restarts: ${c.workerRestarts}, hangs: ${c.hangs}, owner re-chowns: ${c.ownerRechowns}`,
  );
  const o = s.owners;
  if (o) {
    const refused = o.refusedByKernel + o.refusedByBound;
    lines.push(
      `  volume owners: ${o.pods} pods, ${o.volumes} volumes watched (${o.watches} inotify watches${o.polled ? `, ${o.polled} volumes polled` : ''}); files owned ${o.ownedBeforeSwap} before the swap, ${o.ownedAfterSwap} after it${refused ? `; watches refused: ${o.refusedByKernel} by the kernel, ${o.refusedByBound} by envhook's bounds` : ''}`,
    );
  }
  if (s.lastError) lines.push(`  last error: ${s.lastError.at} ${oneLine(s.lastError.message)}`);
  lines.push(`  updated: ${s.updatedAt}`);
  return lines.join('\n') + '\n';
}

/** "3d 4h", "5m 2s", "12s": how long ago `iso` was. */
function ago(iso: string, now: number): string {
  let sec = Math.max(0, Math.floor((now - Date.parse(iso)) / 1000));
  const parts: string[] = [];
  for (const [unit, size] of [
    ['d', 86400],
    ['h', 3600],
    ['m', 60],
    ['s', 1],
  ] as const) {
    if (parts.length > 0 || sec >= size || unit === 's') parts.push(`${Math.floor(sec / size)}${unit}`);
    sec %= size;
    if (parts.length === 2) break;
  }
  return `${parts.join(' ')} ago`;
}
