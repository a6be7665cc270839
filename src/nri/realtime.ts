// `--fifo-priority N` (setting fifoPriority): the worker, which owns the files of a volume the
// kubelet rewrote, runs under SCHED_FIFO at priority N, so that it is scheduled in the moment
// between the kubelet's last write and its `..data` swap on a busy node (docs/ownership.md has
// the failed reads of a non-root reader with and without it). Node cannot call
// sched_setscheduler: util-linux's chrt does it, found at an absolute path first (a runtime
// starts a pre-installed plugin with no PATH). A worker left at ordinary priority is a warning,
// never a failure.
import { spawnSync } from 'node:child_process';
import { procStat } from './proc-stat.ts';
import { errnoReason } from '../errors.ts';
import { findExecutable } from '../oci/runtime-binary.ts';

/** chrt's path: util-linux's places, then PATH's absolute entries; undefined when there is none. */
export function findChrt(envPath = process.env.PATH ?? ''): string | undefined {
  return findExecutable('chrt', { first: ['/usr/bin', '/bin'], envPath, absoluteOnly: true });
}

/** Puts every thread of `pid` under SCHED_FIFO at `priority`; the reason it could not, or undefined. */
export function setFifo(pid: number, priority: number, chrt = findChrt()): string | undefined {
  if (chrt === undefined) return 'no chrt (util-linux) at /usr/bin/chrt, /bin/chrt or on PATH';
  const r = spawnSync(chrt, ['-a', '-f', '-p', String(priority), String(pid)], { encoding: 'utf8', stdio: ['ignore', 'ignore', 'pipe'] });
  if (r.error) return `${chrt}: ${errnoReason(r.error)}`;
  // chrt's own message: a pid and the errno text (EPERM without CAP_SYS_NICE), never a value.
  if (r.status !== 0) return `${chrt} exited ${r.status}: ${r.stderr.trim().split('\n')[0] ?? ''}`;
  return undefined;
}

/** The scheduling policy of `pid` from /proc: 0 ordinary, 1 SCHED_FIFO. */
export function schedPolicy(pid: number): number {
  const stat = procStat(pid);
  if (stat === undefined) throw new Error(`no process ${pid}`);
  return stat.policy;
}
