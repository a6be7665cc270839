// The kubelet root (kubeletRoot in the settings) must exist under --root: envhook finds every
// pod's volumes under <kubeletRoot>/pods, and a wrong root fails every pod that asks for env.
import fs from 'node:fs';
import path from 'node:path';
import { ok, problem, type CheckResult } from './check.ts';
import type { NodeView } from './node.ts';

export function kubeletRootCheck(node: NodeView): CheckResult {
  const dir = node.settings.kubeletRoot;
  if (!path.posix.isAbsolute(dir)) return problem('kubelet-root', `kubeletRoot ${JSON.stringify(dir)} is not an absolute path`, fix(node));
  const pods = path.posix.join(dir, 'pods');
  if (!fs.statSync(node.real(dir), { throwIfNoEntry: false })?.isDirectory())
    return problem('kubelet-root', `${dir} is not a directory`, fix(node));
  if (!fs.statSync(node.real(pods), { throwIfNoEntry: false })?.isDirectory())
    return problem('kubelet-root', `${dir} has no pods directory: no kubelet runs with that root`, fix(node));
  return ok('kubelet-root', `${pods} exists`);
}

const fix = (node: NodeView) =>
  `set kubeletRoot in ${node.settingsFile} to the kubelet's --root-dir (envhook install --kubelet-root DIR writes it)`;
