// What can fail at the start of `envhook nri`, checked before anything starts (no worker, no
// status file, no lock): socket paths, the metrics address's form, the run directory (usable,
// and at its host path: run-dir-host.ts). Each a one-line EnvhookError.
import { EnvhookError } from '../../errors.ts';
import type { AllSettings } from '../../settings.ts';
import { checkRunDirUsable } from '../../watch/run-dir.ts';
import { checkRunDirAtHostPath } from './run-dir-host.ts';

export async function checkStart(settings: AllSettings, runDir: string): Promise<void> {
  // Linux's sun_path: 108 bytes with the NUL. Longer, every dial fails (EINVAL): say so once, now.
  for (const [what, p] of [
    ['NRI', settings.nriSocket],
    ['CRI', settings.criSocket],
  ] as const) {
    if (p !== undefined && Buffer.byteLength(p) > 107)
      throw new EnvhookError(`${what} socket path is ${Buffer.byteLength(p)} bytes: a unix socket path has at most 107`);
  }
  // node:http is loaded only when the endpoint is asked for.
  if (settings.metricsAddress !== undefined) (await import('./http.ts')).parseAddress(settings.metricsAddress);
  checkRunDirUsable(runDir);
  checkRunDirAtHostPath(runDir);
}
