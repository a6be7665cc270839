// `envhook doctor`: every check of the node, in the order an admin would look (settings, the
// kubelet, the run directory, what is installed, the runtime's own reading, the front, the plugin, the containers
// running without their env, the watcher). Each check is a file of its own; this is only their
// order and the summary.
import type { CheckResult } from './check.ts';
import { frontCheck } from './front-check.ts';
import { installChecks } from './install-check.ts';
import { nriSocketChecks } from './nri-socket-check.ts';
import { runtimeChecks } from './runtime-check.ts';
import { installedCheck } from './installed-check.ts';
import { kubeletRootCheck } from './kubelet-root-check.ts';
import { readNode, type NodeOptions } from './node.ts';
import { runDirCheck } from './run-dir-check.ts';
import { ownerWatcherCheck } from './owner-watcher-check.ts';
import { pluginCheck } from './plugin-check.ts';
import { pluginView } from './plugin-state.ts';
import { settingsCheck } from './settings-check.ts';
import { unappliedChecks } from './unapplied-check.ts';

export interface DoctorReport {
  ok: boolean;
  counts: { ok: number; problem: number; skipped: number };
  checks: CheckResult[];
}

export async function doctor(opts: NodeOptions, env: NodeJS.ProcessEnv = process.env): Promise<DoctorReport> {
  const node = readNode(opts, env);
  const plugin = pluginView(node);
  const checks = [
    settingsCheck(node),
    kubeletRootCheck(node),
    runDirCheck(node),
    installedCheck(node, plugin),
    ...runtimeChecks(node, plugin),
    ...installChecks(node),
    ...(await nriSocketChecks(node, plugin)),
    frontCheck(node),
    pluginCheck(node, plugin),
    ...unappliedChecks(node),
    ...ownerWatcherCheck(node, plugin),
  ];
  const count = (s: CheckResult['state']) => checks.filter((c) => c.state === s).length;
  const counts = { ok: count('ok'), problem: count('problem'), skipped: count('skipped') };
  return { ok: counts.problem === 0, counts, checks };
}
