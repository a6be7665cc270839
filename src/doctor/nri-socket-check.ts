// NRI on, and its socket listening: the socket the runtime's reading names (containerd's
// socket_path, CRI-O's nri_listen; NRI's default otherwise), or the one a running plugin dialled,
// connected to and closed at once (src/doctor/socket-probe.ts). A runtime with NRI on creates it
// when it starts, removing whatever was at the path, and removes it when it stops; a runtime
// killed leaves it behind with nothing listening: then no plugin connects (NRI fails open), a
// problem as much as no socket at all (docs/nri-status.md#envhook-doctor-the-node-end-to-end).
import { EnvhookError } from '../errors.ts';
import { configDump } from '../install/containerd/containerd-binary.ts';
import { NRI_PLUGIN } from '../install/containerd/containerd-nri-enable.ts';
import { crioConfigDump } from '../install/crio/crio-check.ts';
import { makeLayout, type Runtime } from '../install/layout.ts';
import { NRI_DEFAULT_SOCKET } from '../install/nri-plugin.ts';
import { tableAt } from '../install/toml.ts';
import { pathFor } from '../oci/runtime-binary.ts';
import { FIX_FILES, ok, problem, skipped, type CheckResult } from './check.ts';
import type { NodeView, RecordedInstall } from './node.ts';
import type { PluginView } from './plugin-state.ts';
import { runtimeBinary } from './runtime-binary.ts';
import { probeSocket, type SocketProbe } from './socket-probe.ts';

const CHECK = 'nri-socket';

/** The socket to look at: where, named how in the lines, and the runtime to restart (unknown for the one a plugin dials). */
interface NriSocket {
  socket: string;
  what: string;
  runtime?: Runtime;
}

export async function nriSocketChecks(node: NodeView, plugin: PluginView): Promise<CheckResult[]> {
  const found = node.installs.filter((i) => i.mode === 'nri').map((i) => installedSocket(node, i));
  const dialled = node.status?.socket;
  if (found.length === 0 && plugin.runsAs !== null && dialled) found.push({ socket: dialled, what: 'the socket the plugin dials' });
  if (found.length === 0) return [skipped(CHECK, 'no NRI plugin installed or running')];
  return Promise.all(found.map(async (s) => ('check' in s ? s : socketLine(s, await probeSocket(node.real(s.socket))))));
}

function installedSocket(node: NodeView, i: RecordedInstall): NriSocket | CheckResult {
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
    return problem(CHECK, err.message, FIX_FILES);
  }
  const path = typeof socket === 'string' && socket !== '' ? socket : NRI_DEFAULT_SOCKET;
  return { socket: path, what: `${i.runtime}'s NRI socket`, runtime: i.runtime };
}

function socketLine({ socket, what, runtime }: NriSocket, p: SocketProbe): CheckResult {
  const at = `${what} ${socket}`;
  const service = runtime ? `systemctl restart ${runtime}` : 'systemctl restart containerd, or crio';
  const restart = `restart the runtime (${service}): with NRI on it listens there when it starts`;
  const look = `look at the runtime (${service.replace('restart', 'status')}); restart it`;
  switch (p.state) {
    case 'listening':
      return ok(CHECK, `${at} accepts connections`);
    case 'absent':
      return problem(
        CHECK,
        `${at} is not there: the runtime is not running or has not started NRI (off, or not restarted since install)`,
        restart,
      );
    case 'not-socket':
      return problem(CHECK, `${at} is ${p.kind}, not a socket: no plugin can connect`, `${restart}, in place of what is there`);
    case 'stale':
      return problem(
        CHECK,
        `${at} is a socket nothing listens on (connection refused): left by a runtime that is not running (killed before it could remove it), or NRI is off now`,
        restart,
      );
    case 'full':
      return problem(CHECK, `${at} accepts no connection: its queue is full (EAGAIN): the runtime is stopped or hung`, look);
    case 'timeout':
      return problem(CHECK, `${at} did not answer a connection within ${p.ms / 1000} s: the runtime is stopped or hung`, look);
    case 'too-long':
      return problem(
        CHECK,
        `${at}: not checked: its path under --root is longer than the 107 bytes a socket address holds`,
        'give a shorter --root',
      );
    case 'failed':
      return problem(CHECK, `cannot ${p.step} ${at}: ${p.reason}`);
  }
}
