// What can fail at the start of `envhook nri`, checked before anything starts (no worker, no
// status file, no lock): socket paths, the metrics address's form, the run directory (usable, at
// its host path: run-dir-host.ts, and in memory or allowed on disk: watch/run-dir-memory.ts).
// Each a one-line EnvhookError.
import { EnvhookError } from '../../errors.ts';
import type { AllSettings } from '../../settings.ts';
import { checkRunDirUsable } from '../../watch/run-dir.ts';
import { checkRunDirInMemory } from '../../watch/run-dir-memory.ts';
import { checkRunDirAtHostPath } from './run-dir-host.ts';

/** Throws the first refusal; returns the run directory's warning (on disk, allowed) for the log. */
export async function checkStart(settings: AllSettings, runDir: string): Promise<string | undefined> {
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
  // The worker writes owned copies there: refused before anything is made, or a warning for the log.
  const onDisk = checkRunDirInMemory(runDir, settings.runDirOnDisk ?? 'warn', true);
  checkRunDirUsable(runDir);
  checkRunDirAtHostPath(runDir);
  return onDisk;
}
