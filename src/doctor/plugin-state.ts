// The NRI plugin as its status file and /proc under --root show it: connected, not connected
// (its supervisor running), stale (the supervisor gone: its pid gone or another process's), or
// absent (no status file); how it runs (the runtime's plugin directory, the runtime's socket, a
// DaemonSet); and whether that is a problem. Connected is expected where NRI mode is installed,
// and of any supervisor running (a DaemonSet runs `envhook nri` without an install); a file left
// by one that is gone, with NRI mode not installed, is history, not a failure.
import path from 'node:path';
import { procStat } from '../nri/proc-stat.ts';
import type { NriStatus, RunsAs } from '../nri/status-file.ts';
import type { NodeView } from './node.ts';

export type PluginState = 'connected' | 'disconnected' | 'stale' | 'absent';

export interface PluginView {
  state: PluginState;
  /** How the running plugin was started; null when none runs or its file does not say. */
  runsAs: RunsAs | null;
  /** Why not as expected, one line; null when fine. */
  problem: string | null;
}

export function pluginView(node: NodeView): PluginView {
  const status = node.status;
  const nriInstalled = node.installs.some((i) => i.mode === 'nri');
  let state: PluginState = 'absent';
  if (status) state = !supervisorRuns(node.root, status) ? 'stale' : status.connected ? 'connected' : 'disconnected';
  let problem: string | null = null;
  if (state === 'disconnected') problem = `NRI plugin not connected since ${status!.since}`;
  else if (nriInstalled && state === 'absent') problem = `NRI plugin installed but not running: no status file ${node.statusFile}`;
  else if (nriInstalled && state === 'stale') problem = `NRI plugin installed but not running: its supervisor (pid ${status!.pid}) is gone`;
  const runsAs = state === 'connected' || state === 'disconnected' ? (status!.runsAs ?? null) : null;
  return { state, runsAs, problem };
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

/** How the plugin runs, for an admin. */
export const RUNS_AS_TEXT: Record<RunsAs, string> = {
  'pre-installed': 'pre-installed: started by the runtime from its plugin directory',
  upgraded:
    "pre-installed, upgraded without a runtime restart: started from its plugin file by the plugin it replaced, connected to the runtime's NRI socket until the runtime restarts and starts the file itself",
  external: "external: connects to the runtime's NRI socket (a service of the node's)",
  daemonset: "a DaemonSet: envhook nri in a pod, connected to the node's NRI socket",
};
