// The NRI plugin connected where it is expected (NRI mode installed, or a supervisor running: a
// DaemonSet, a service), and how it runs. The same judgement as `envhook status`'s (plugin-state.ts).
import { ok, problem, skipped, type CheckResult } from './check.ts';
import type { NodeView } from './node.ts';
import { RUNS_AS_TEXT, type PluginView } from './plugin-state.ts';

export function pluginCheck(node: NodeView, plugin: PluginView): CheckResult {
  const s = node.status;
  if (plugin.problem) return problem('plugin', plugin.problem, todo(node));
  if (plugin.state !== 'connected') return skipped('plugin', 'no NRI plugin installed or running');
  const runtime = s!.runtime ? ` to ${s!.runtime.name} ${s!.runtime.version}` : '';
  const how = plugin.runsAs ? `; ${RUNS_AS_TEXT[plugin.runsAs]}` : '';
  return ok('plugin', `${s!.plugin} connected${runtime} since ${s!.since}${how}`);
}

function todo(node: NodeView): string {
  if (node.installs.some((i) => i.mode === 'nri' && !i.record.externalPlugin))
    return 'restart the runtime, which starts its pre-installed plugins (systemctl restart containerd, or crio); its log: /var/log/envhook-nri.log';
  // --external-plugin installs: NRI switched on for a DaemonSet's plugin, which must run on this node
  return "see the plugin's log (kubectl logs for a DaemonSet, e.g. kubectl -n kube-system logs ds/envhook-nri; the service's journal)";
}
