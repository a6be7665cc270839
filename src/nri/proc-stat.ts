// What the kernel says of a process in /proc/<pid>/stat, for the NRI daemon and `envhook status`:
// its state (a stopped worker is hung for sure), its start time (a pid in a status file names the
// same process only while that process's start time matches: a pid reused after the supervisor
// died names another) and its scheduling policy (SCHED_FIFO for the worker). The second field,
// the command name, may hold spaces and parentheses: fields are counted after its last `)`.
// And /proc/<pid>/schedstat: how long the process's main thread (a worker's event loop) has run,
// so that a worker starved on a loaded node is not taken for a hung one.
// The supervisor reads these five times a second for the life of the node: into one buffer of
// this module, not with readFileSync, which takes two new 8 KiB buffers for every read of a /proc
// file (the kernel gives no size): 80 KiB/s of short-lived native memory (bench/soak.md).
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
  const text = readProcFile(path.join(procRoot, String(pid), 'stat'));
  if (text === undefined) return undefined;
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
  const text = readProcFile(path.join(procRoot, String(pid), 'schedstat'));
  if (text === undefined) return undefined;
  const ran = Number(text.split(' ')[0]);
  return Number.isFinite(ran) ? ran : undefined;
}

/** Room for either file: stat is under 1 KiB (its command name at most 64 bytes), schedstat under 100 bytes. */
const PROC_FILE_BYTES = 4096;
let procBuffer: Buffer | undefined;

/** A small /proc file's text (Latin-1), read with one read into the module's buffer; undefined when it cannot be read. */
function readProcFile(file: string): string | undefined {
  procBuffer ??= Buffer.allocUnsafeSlow(PROC_FILE_BYTES);
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch {
    return undefined;
  }
  try {
    const n = fs.readSync(fd, procBuffer, 0, PROC_FILE_BYTES, null);
    // Larger than any such file: read it whole the ordinary way.
    return n < PROC_FILE_BYTES ? procBuffer.toString('latin1', 0, n) : fs.readFileSync(file, 'latin1');
  } catch {
    return undefined;
  } finally {
    fs.closeSync(fd);
  }
}
