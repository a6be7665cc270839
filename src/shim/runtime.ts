// Which real runtime the shim becomes: the `runtime` setting as a path, or that name on PATH
// (default runc), found by the one runtime lookup (oci/runtime-binary.ts): never an envhook
// front, not the front that called us (ENVHOOK_FRONT), so a misconfiguration fails instead of looping.
import { EnvhookError } from '../errors.ts';
import { findRuntimeBinary, runtimeFault } from '../oci/runtime-binary.ts';

export function resolveRuntime(setting: string, env: NodeJS.ProcessEnv = process.env): string {
  if (setting.includes('/')) {
    const fault = runtimeFault(setting, env.ENVHOOK_FRONT);
    if (fault === 'missing' || fault === 'not executable') throw new EnvhookError(`runtime ${setting} is not an executable file`);
    if (fault === 'front')
      throw new EnvhookError(
        `runtime ${setting} is an envhook front, not a real runtime: name the real one (envhook install --oci-runtime, or ENVHOOK_RUNTIME)`,
      );
    return setting;
  }
  // PATH order, skipping fronts: an admin may have installed the front as `runc`.
  const found = findRuntimeBinary(setting, { envPath: env.PATH ?? '', front: env.ENVHOOK_FRONT });
  if (!found) throw new EnvhookError(`runtime "${setting}" not found on PATH (other than an envhook front)`);
  return found.path;
}
