// What can fail at the start of `envhook nri`, checked before anything starts (no worker, no
// status file, no lock): socket paths, the metrics address's form, the run directory (usable, at
// its host path: run-dir-host.ts, and in memory or allowed on disk: watch/run-dir-memory.ts; not
// the run directory of a running envhook nri for another runtime socket).
// Each a one-line EnvhookError.
import { EnvhookError } from '../../errors.ts';
import type { AllSettings } from '../../settings.ts';
import { checkRunDirUsable } from '../../watch/run-dir.ts';
import { checkRunDirInMemory } from '../../watch/run-dir-memory.ts';
import { checkRunDirAtHostPath } from './run-dir-host.ts';
import { readStatus } from '../status-file.ts';
import { procStat } from '../proc-stat.ts';
import { lockName } from './lock.ts';

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
  refuseRunDirOfOtherSocket(runDir, settings.nriSocket);
  return onDisk;
}

/**
 * The status file is the run directory's, and `status` / `doctor` take it for the node's plugin:
 * a supervisor that runs for another runtime socket keeps it. A second `envhook nri` for another
 * socket (an ad-hoc run for another runtime) would overwrite it: it needs a run directory of its
 * own. The same socket is the instance lock's matter (a hand-over, an upgrade): not refused here.
 * A file of an older envhook (no nriSocket) names its socket only when it dialled one.
 */
function refuseRunDirOfOtherSocket(runDir: string, socket: string): void {
  let other;
  try {
    other = readStatus(runDir);
  } catch {
    return; // not a status file envhook can read: the supervisor replaces it
  }
  const theirs = other?.nriSocket ?? other?.socket;
  // one socket by two paths (a symlinked directory) is one socket: compared as the lock compares them
  if (!other || theirs === undefined || other.pid === process.pid || lockName(theirs) === lockName(socket)) return;
  const stat = procStat(other.pid);
  if (!stat || (other.pidStartTicks !== undefined && stat.startTicks !== other.pidStartTicks)) return; // gone: its file is history
  throw new EnvhookError(
    `run directory ${runDir} is in use by envhook nri for the NRI socket ${theirs} (pid ${other.pid}): give this one, for ${socket}, a run directory of its own (--run-dir, ENVHOOK_RUN_DIR, runDir)`,
  );
}
