// The runtime front (<prefix>/envhook-runtime, the runtime handler's binary) execs the real runtime
// install wrote into envhook-runtime.conf: it must resolve under --root to an executable that is
// not itself a front (a front reached again fails every container of the handler). A name is
// looked up where a runtime service's default PATH finds it.
import fs from 'node:fs';
import { findRuntimeBinary, isExecutableFile, runtimeFault, USUAL_DIRS } from '../oci/runtime-binary.ts';
import { ok, problem, skipped, type CheckResult } from './check.ts';
import type { NodeView } from './node.ts';

export function frontCheck(node: NodeView): CheckResult {
  const { layout } = node;
  if (!node.installs.some((i) => i.mode === 'shim' && i.runtime !== 'podman'))
    return skipped('front', 'no runtime handler installed (the front runs only under it)');
  const todo = `name the real runtime: envhook install --runtime RUNTIME --oci-runtime PATH`;
  if (!isExecutableFile(node.real(layout.front)))
    return problem('front', `${layout.front} is missing or not executable`, 're-run envhook install');
  let setting = 'runc';
  try {
    const line = fs
      .readFileSync(node.real(layout.conf), 'utf8')
      .split('\n')
      .find((l) => l.startsWith('runtime='));
    if (line && line.length > 'runtime='.length) setting = line.slice('runtime='.length);
  } catch {
    return problem('front', `no ${layout.conf}: the front execs runc from the runtime's PATH`, 're-run envhook install');
  }
  // a name: where a runtime service's default PATH finds it on the node, fronts skipped
  const found = setting.includes('/') ? setting : findRuntimeBinary(setting, { root: node.root, envPath: '', usual: true })?.path;
  if (!found) return problem('front', `runtime "${setting}" is not in ${USUAL_DIRS.join(', ')} (a front skipped)`, todo);
  const fault = runtimeFault(node.real(found));
  if (fault === 'front') return problem('front', `runtime ${found} is an envhook front, not a runtime`, todo);
  if (fault) return problem('front', `runtime ${found} is missing or not executable`, todo);
  return ok('front', `${layout.front} execs ${found}`);
}
