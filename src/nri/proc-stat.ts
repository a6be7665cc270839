// What the kernel says of a process in /proc/<pid>/stat, for the NRI daemon and `envhook status`:
// its state (a stopped worker is hung for sure), its start time (a pid in a status file names the
// same process only while that process's start time matches: a pid reused after the supervisor
// died names another) and its scheduling policy (SCHED_FIFO for the worker). The second field,
// the command name, may hold spaces and parentheses: fields are counted after its last `)`.
// And /proc/<pid>/schedstat: how long the process's main thread (a worker's event loop) has run,
// so that a worker starved on a loaded node is not taken for a hung one.
import fs from 'node:fs';
import path from 'node:path';

export interface ProcStat {
  /** Field 3: R, S, D, T (stopped), t (traced), Z, ... */
  state: string;
  /** Field 22: when the process started, in clock ticks since boot. */
  startTicks: number;
  /** Field 41: 0 ordinary, 1 SCHED_FIFO, 2 SCHED_RR, ... */
  policy: number;
}

/** /proc/<pid>/stat under `procRoot` (a host root's /proc for `envhook status --root`), or undefined when the process is gone. */
export function procStat(pid: number, procRoot = '/proc'): ProcStat | undefined {
  let text: string;
  try {
    text = fs.readFileSync(path.join(procRoot, String(pid), 'stat'), 'latin1');
  } catch {
    return undefined;
  }
  // Fields from the third on: state is [0], field N is [N - 3].
  const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return { state: f[0] ?? '', startTicks: Number(f[19]), policy: Number(f[38]) };
}

/**
 * Nanoseconds the process's main thread (a worker's event loop) has run on a CPU, from
 * /proc/<pid>/schedstat's first field (the thread group leader's own); undefined when the process
 * is gone or the kernel keeps no such count.
 */
export function mainThreadCpuNs(pid: number, procRoot = '/proc'): number | undefined {
  let text: string;
  try {
    text = fs.readFileSync(path.join(procRoot, String(pid), 'schedstat'), 'latin1');
  } catch {
    return undefined;
  }
  const ran = Number(text.split(' ')[0]);
  return Number.isFinite(ran) ? ran : undefined;
}
