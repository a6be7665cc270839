// The runtime front (<prefix>/envhook-runtime, the runtime handler's binary) execs the real runtime
// install wrote into envhook-runtime.conf: it must resolve under --root to an executable that is
// not itself a front (a front reached again fails every container of the handler). A name is
// looked up on the PATH a runtime service has by default.
import fs from 'node:fs';
import path from 'node:path';
import { carriesMarker } from '../shim/runtime.ts';
import { ok, problem, skipped, type CheckResult } from './check.ts';
import type { NodeView } from './node.ts';

/** systemd's default PATH for a service: what containerd's and CRI-O's own PATH is. */
const SERVICE_PATH = ['/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin'];

export function frontCheck(node: NodeView): CheckResult {
  const { layout } = node;
  if (!node.installs.some((i) => i.mode === 'shim' && i.runtime !== 'podman'))
    return skipped('front', 'no runtime handler installed (the front runs only under it)');
  const todo = `name the real runtime: envhook install --runtime RUNTIME --oci-runtime PATH`;
  if (!isExecutable(node.real(layout.front)))
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
  const found = setting.includes('/')
    ? setting
    : SERVICE_PATH.map((d) => path.posix.join(d, setting)).find((f) => isExecutable(node.real(f)));
  if (!found) return problem('front', `runtime "${setting}" is not on the runtime service's PATH (${SERVICE_PATH.join(':')})`, todo);
  if (!isExecutable(node.real(found))) return problem('front', `runtime ${found} is missing or not executable`, todo);
  if (carriesMarker(node.real(found))) return problem('front', `runtime ${found} is an envhook front, not a runtime`, todo);
  return ok('front', `${layout.front} execs ${found}`);
}

function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}
