// Each runtime envhook is installed for: found, and its version. A runtime known only from the
// NRI plugin's registration (a DaemonSet's pod holds no runtime binary) is said so.
import type { Runtime } from '../install/layout.ts';
import { ok, problem, type CheckResult } from './check.ts';
import type { NodeView } from './node.ts';
import type { PluginView } from './plugin-state.ts';
import { runtimeBinary } from './runtime-binary.ts';

/** The runtimes of the recorded installs; with `plugin`, else the one the running plugin registered with. */
export function runtimeChecks(node: NodeView, plugin?: PluginView): CheckResult[] {
  const runtimes = [...new Set(node.installs.map((i) => i.runtime))];
  const out = runtimes.map((r) => runtimeCheck(node, r));
  const registered = node.status?.runtime;
  if (runtimes.length === 0 && plugin?.state === 'connected' && registered)
    out.push(ok('runtime', `${registered.name} ${registered.version}, as it registered the NRI plugin`));
  return out;
}

const ROOT_ONLY = ': run as root';

function runtimeCheck(node: NodeView, runtime: Runtime): CheckResult {
  const b = runtimeBinary(node, runtime);
  // not root: the binary is there, but only root may run it inside --root (chroot)
  if ('missing' in b && b.missing.endsWith(ROOT_ONLY))
    return problem(
      'runtime',
      `${runtime}: ${b.missing.slice(0, -ROOT_ONLY.length)}`,
      "run as root (the node's runtime is run inside --root with chroot)",
    );
  // named by install's flag, recorded: every line says so
  const atInstall = node.recordedBinaries.has(runtime) ? ' at install' : '';
  if ('missing' in b)
    return problem(
      'runtime',
      `${runtime}: ${b.missing}${atInstall ? ' (the binary install was named, recorded in its state)' : ''}`,
      atInstall
        ? `name the runtime's binary with --${runtime} (this command's wins), or re-run envhook install with the flags it was installed with`
        : (b.todo ?? `install ${runtime}, or check --root (it is the node's root: ${node.root})`),
    );
  return ok('runtime', `${runtime} ${b.version} (${b.bin.path}${b.bin.flag ? `, named by ${b.bin.flag}${atInstall}` : ''})`);
}
