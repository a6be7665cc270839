// `envhook status [--json]`: is envhook installed (per runtime, which modes, and the NRI plugin
// as a DaemonSet), does the node still read what install wrote, is the settings file valid, is
// the NRI plugin running and registered, how it runs, since when, with which runtime and NRI
// version, what it adjusted, refused and missed (each container still running without its env a
// problem), its last error. Read from the install state
// (<prefix>/state.json), the settings file and the supervisor's status file
// (<runDir>/nri-status.json), each under --root: names, versions, times and counts only. The
// checks are `envhook doctor`'s (src/doctor/). Exit status 1, with the first problem as one line
// on stderr, on any problem.
import type { Command } from 'commander';
import { oneLine } from '../errors.ts';
import { addNodeFlags } from './options.ts';
import type { NodeOptions } from '../doctor/node.ts';
import type { NriStatus, RunsAs } from '../nri/status-file.ts';
import { checkLine, type CheckResult } from '../doctor/check.ts';
import { readNode, type NodeView } from '../doctor/node.ts';
import { pluginView, RUNS_AS_TEXT, type PluginState } from '../doctor/plugin-state.ts';
import { settingsCheck } from '../doctor/settings-check.ts';
import { installChecks } from '../doctor/install-check.ts';
import { runtimeChecks } from '../doctor/runtime-check.ts';
import { unappliedChecks } from '../doctor/unapplied-check.ts';
import { size as sizeOf } from '../mirror/budget.ts';

type StatusOptions = NodeOptions & { json?: boolean };

export type { PluginState };

/** What `--json` prints: every key always present (null where there is nothing). */
export interface StatusReport {
  /** runtime → the modes installed for it ("shim", "nri"), from the install state and a running DaemonSet. */
  installed: Record<string, string[]>;
  /** connected / disconnected (supervisor running) / stale (its supervisor gone: pid gone or another process's) / absent (no status file). */
  nri: PluginState;
  /** How the running plugin was started: pre-installed, external, daemonset; null when none runs. */
  runsAs: RunsAs | null;
  /** The checks run (doctor's lines): each recorded install's runtime and its own reading; the settings file when it has a problem. */
  checks: CheckResult[];
  ok: boolean;
  /** Every problem, one line each (`<check>: <what> — <what to do>`, or the plugin's); the first, or null. */
  problems: string[];
  problem: string | null;
  statusFile: string;
  /** The status file as the supervisor wrote it (src/nri/status-file.ts), or null. */
  status: NriStatus | null;
}

export function registerStatus(program: Command): void {
  addNodeFlags(program.command('status'))
    .description(
      'is envhook installed and read by the runtime; is its NRI plugin connected, how it runs, since when, to what; what it adjusted, refused, missed',
    )
    .option('--json', 'print one JSON object (keys: docs/nri-status.md)')
    .action((opts: StatusOptions) => {
      const report = statusReport(opts);
      process.stdout.write(opts.json ? JSON.stringify(report, null, 2) + '\n' : renderReport(report, Date.now()));
      if (!report.ok) {
        const more = report.problems.length - 1;
        process.stderr.write(`envhook: ${report.problem}${more > 0 ? ` (and ${more} more above)` : ''}\n`);
        process.exitCode = 1;
      }
    });
}

export function statusReport(opts: StatusOptions): StatusReport {
  const node = readNode(opts);
  const plugin = pluginView(node);
  // the runtime's own reading of every recorded install; the settings file when it has a problem;
  // each container running without its env
  const checks = [
    ...[settingsCheck(node)].filter((c) => c.state !== 'ok'),
    ...runtimeChecks(node),
    ...installChecks(node),
    ...unappliedChecks(node).filter((c) => c.state === 'problem'),
  ];
  const problems = [
    ...checks.filter((c) => c.state === 'problem').map((c) => checkLine(c).slice('problem '.length)),
    ...(plugin.problem ? [plugin.problem] : []),
  ];
  return {
    installed: installed(node, plugin.runsAs),
    nri: plugin.state,
    runsAs: plugin.runsAs,
    checks,
    ok: problems.length === 0,
    problems,
    problem: problems[0] ?? null,
    statusFile: node.statusFile,
    status: node.status ?? null,
  };
}

const MODE_TEXT: Record<string, string> = { daemonset: 'NRI plugin as a DaemonSet' };

/**
 * The installs recorded in state.json, runtime → modes; and a running plugin started in a pod (a
 * DaemonSet, which installs nothing on the node) under the runtime it registered with.
 */
function installed(node: NodeView, runsAs: RunsAs | null): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const i of node.installs) (out[i.runtime] ??= []).push(i.mode);
  if (runsAs === 'daemonset') (out[node.status?.runtime?.name ?? 'runtime not registered yet'] ??= []).push('daemonset');
  return out;
}

export function renderReport(r: StatusReport, now: number): string {
  const lines: string[] = [];
  const inst = Object.entries(r.installed).map(([rt, modes]) => `${oneLine(rt)} (${modes.map((m) => MODE_TEXT[m] ?? m).join(', ')})`);
  lines.push(`installed: ${inst.length ? inst.join(', ') : 'nothing'}`);
  for (const c of r.checks) lines.push(`  ${checkLine(c)}`);
  const s = r.status;
  const nriInstalled = Object.values(r.installed).some((m) => m.includes('nri'));
  if (!s) {
    // a node without NRI mode has no status file to speak of
    if (nriInstalled) lines.push(`nri plugin: not running (no status file ${r.statusFile})`);
    return lines.join('\n') + '\n';
  }
  // the file of a plugin gone, NRI mode not installed: history (--json still has it)
  if (r.nri === 'stale' && !nriInstalled) return lines.join('\n') + '\n';
  const head =
    r.nri === 'stale'
      ? `not running: supervisor pid ${s.pid} is gone (last known below)`
      : `${r.nri === 'connected' ? 'connected' : 'not connected'} since ${s.since} (${ago(s.since, now)})`;
  lines.push(`nri plugin: ${oneLine(s.plugin)} ${head}`);
  if (s.runtime)
    lines.push(
      `  runtime: ${oneLine(s.runtime.name)} ${oneLine(s.runtime.version)}, NRI ${s.nriVersion === undefined ? 'version not given' : oneLine(s.nriVersion)}`,
    );
  if (r.runsAs) lines.push(`  runs as: ${RUNS_AS_TEXT[r.runsAs]}`);
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
  if (o?.copies !== undefined) {
    const l = o.copyLatency;
    const mean = l && l.count > 0 ? `, ${((1000 * l.sum) / l.count).toFixed(1)} ms after the kubelet's swap on average` : '';
    const held = o.copyBytes === undefined ? '' : ` (${sizeOf(o.copyBytes)} in ${o.copyFiles ?? 0} files)`;
    lines.push(`  owned copies: ${o.copies} volumes${held}, ${o.copyUpdates ?? 0} updates${mean}, ${o.copyFailures ?? 0} failed`);
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
