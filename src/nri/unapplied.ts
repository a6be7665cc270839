// Containers running without the env they asked for (created while the plugin was not
// registered, not evicted): the supervisor keeps their list in the status file, the metrics count
// them and `envhook status` / `envhook doctor` name each as a problem. One still runs while its
// process does: the pid the runtime gave, with the start time recorded when it was first seen (a
// pid reused later names another process). A container whose pid was not given (seen at its
// PostCreateContainer, before it started) counts as running until the next Synchronize says.
import { procStat } from './proc-stat.ts';
import { MAX_UNAPPLIED, type UnappliedContainer } from './status-file.ts';
import type { MissedContainer } from './worker-messages.ts';

/** The status file's entry for a missed container: its start time read now, when /proc shows it. */
export function unappliedEntry(c: MissedContainer, procRoot = '/proc'): UnappliedContainer {
  const ticks = c.pid === undefined ? undefined : procStat(c.pid, procRoot)?.startTicks;
  return {
    id: c.id,
    container: c.name,
    pod: c.pod,
    namespace: c.namespace,
    ...(c.pid === undefined ? {} : { pid: c.pid }),
    ...(ticks === undefined || !Number.isSafeInteger(ticks) ? {} : { pidStartTicks: ticks }),
  };
}

/** True while the container's process runs (or, without a pid, while nothing says it ended). */
export function stillRuns(u: UnappliedContainer, procRoot = '/proc'): boolean {
  if (u.pid === undefined) return true;
  const stat = procStat(u.pid, procRoot);
  if (stat === undefined || stat.state === 'Z' || stat.state === 'X') return false;
  return u.pidStartTicks === undefined || stat.startTicks === u.pidStartTicks;
}

/** The list kept: the newest MAX_UNAPPLIED (a bound, not an expected size). */
export const boundUnapplied = (list: UnappliedContainer[]): UnappliedContainer[] => list.slice(-MAX_UNAPPLIED);
