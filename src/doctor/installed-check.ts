// What is installed on the node: the installs recorded in <prefix>/state.json and a running NRI
// plugin started in a pod (a DaemonSet). Nothing at all is a problem for a node meant to run envhook.
import { ok, problem, type CheckResult } from './check.ts';
import type { NodeView } from './node.ts';
import type { PluginView } from './plugin-state.ts';

export function installedCheck(node: NodeView, plugin: PluginView): CheckResult {
  const parts = node.installs.map(
    (i) =>
      `${i.runtime} (${i.mode === 'nri' ? (i.record.externalPlugin ? 'NRI on for an external plugin' : 'NRI plugin') : i.runtime === 'podman' ? 'hooks' : 'runtime handler'})`,
  );
  if (plugin.runsAs === 'daemonset') parts.push(`${node.status?.runtime?.name ?? 'a runtime'} (NRI plugin as a DaemonSet)`);
  if (plugin.runsAs === 'external') parts.push(`${node.status?.runtime?.name ?? 'a runtime'} (NRI plugin run by the node)`);
  if (parts.length) return ok('installed', parts.join(', '));
  return problem(
    'installed',
    `nothing: no install recorded in ${node.layout.state} and no NRI plugin running`,
    'envhook install --runtime containerd|crio|podman (README, Install); or --prefix DIR if it was installed elsewhere',
  );
}
