// The settings file (/etc/envhook/config.json under --root): the front's data aside, every
// envhook the runtime starts (the shim, the hooks, a pre-installed plugin) reads it at each start,
// so a file that is not valid fails every one of them.
import { ok, problem, type CheckResult } from './check.ts';
import type { NodeView } from './node.ts';

export function settingsCheck(node: NodeView): CheckResult {
  if (node.settingsProblem)
    return problem(
      'settings',
      node.settingsProblem,
      'fix or remove the file: every envhook the runtime starts (shim, hooks, NRI plugin) reads it and fails while it is not valid',
    );
  if (!node.fileSettings) return ok('settings', `no ${node.settingsFile}: the defaults`);
  return ok('settings', `${node.settingsFile} is valid`);
}
