// NRI on, and its socket there: the socket the runtime's reading names (containerd's socket_path,
// CRI-O's nri_listen; NRI's default otherwise), or the one a running plugin dialled. A runtime
// with NRI on creates it when it starts: no socket, no plugin connects (NRI fails open).
import fs from 'node:fs';
import { EnvhookError } from '../errors.ts';
import { configDump } from '../install/containerd/containerd-binary.ts';
import { NRI_PLUGIN } from '../install/containerd/containerd-nri-enable.ts';
import { crioConfigDump } from '../install/crio/crio-check.ts';
import { makeLayout } from '../install/layout.ts';
import { NRI_DEFAULT_SOCKET } from '../install/nri-plugin.ts';
import { tableAt } from '../install/toml.ts';
import { pathFor } from '../oci/runtime-binary.ts';
import { ok, problem, skipped, type CheckResult } from './check.ts';
import type { NodeView, RecordedInstall } from './node.ts';
import type { PluginView } from './plugin-state.ts';
import { runtimeBinary } from './runtime-binary.ts';

const CHECK = 'nri-socket';

export function nriSocketChecks(node: NodeView, plugin: PluginView): CheckResult[] {
  const out = node.installs.filter((i) => i.mode === 'nri').map((i) => installedSocket(node, i));
  const dialled = node.status?.socket;
  if (out.length === 0 && plugin.runsAs !== null && dialled) out.push(socketThere(node, dialled, `the socket the plugin dials`));
  if (out.length === 0) out.push(skipped(CHECK, 'no NRI plugin installed or running'));
  return out;
}

function installedSocket(node: NodeView, i: RecordedInstall): CheckResult {
  const b = runtimeBinary(node, i.runtime);
  if ('missing' in b) return skipped(CHECK, `${i.runtime}: its NRI socket not read: ${b.missing}`);
  const layout = makeLayout(i.runtime, { root: node.root, prefix: node.layout.prefix, config: i.record.config });
  let socket: unknown;
  try {
    socket = b.containerd
      ? tableAt(configDump(b.containerd, pathFor(b.containerd, node.root, i.record.config), node.root), 'plugins', NRI_PLUGIN)?.socket_path
      : tableAt(crioConfigDump(b.bin, layout), 'crio', 'nri')?.nri_listen;
  } catch (err) {
    if (!(err instanceof EnvhookError)) throw err;
    return problem(CHECK, err.message, 'fix the file the runtime cannot read');
  }
  return socketThere(node, typeof socket === 'string' && socket !== '' ? socket : NRI_DEFAULT_SOCKET, `${i.runtime}'s NRI socket`);
}

function socketThere(node: NodeView, socket: string, what: string): CheckResult {
  if (fs.statSync(node.real(socket), { throwIfNoEntry: false })?.isSocket()) return ok(CHECK, `${what} ${socket} is there`);
  return problem(
    CHECK,
    `${what} ${socket} is not there: the runtime has not started NRI (off, or not restarted since install)`,
    'restart the runtime (systemctl restart containerd, or crio)',
  );
}
