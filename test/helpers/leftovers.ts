// What a daemon run may leave behind under its temporary directory: processes whose command line
// names it (containerd, shims, the front, envhook), processes whose PIDs a test recorded
// (container processes, whose command lines name nothing of ours), and mounts below it.
import fs from 'node:fs';
import { spawnSync } from 'node:child_process';
import { procStat } from '../../src/nri/proc-stat.ts';

export interface Leftovers {
  processes: string[];
  mounts: string[];
}

/** Start time of a process (/proc/PID/stat, clock ticks since boot), or undefined when it is gone. */
export const startTime = (pid: number): number | undefined => procStat(pid)?.startTicks;

/**
 * The command line of a live process, ' '-joined; '' for a kernel thread; undefined when gone.
 * A process caught in the middle of an exec shows an empty one for an instant (the new memory in
 * place, its arguments not yet recorded), where a kernel thread has no executable: read again.
 */
function commandLine(pid: string): string | undefined {
  for (let tries = 0; ; tries++) {
    let text: string;
    try {
      text = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    } catch {
      return undefined;
    }
    if (text !== '' || tries === 50) return text.replace(/\0/g, ' ').trim();
    try {
      fs.readlinkSync(`/proc/${pid}/exe`);
    } catch {
      return ''; // a kernel thread (no executable), or gone
    }
    Atomics.wait(PAUSE, 0, 0, 1);
  }
}
const PAUSE = new Int32Array(new SharedArrayBuffer(4));

/** Live processes naming `dir` in their command line, and recorded ones still alive (pid and start time). */
export function leftoverProcesses(dir: string, recorded: ReadonlyMap<number, number> = new Map()): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(e) || Number(e) === process.pid) continue;
    const cmdline = commandLine(e);
    if (cmdline?.includes(dir)) out.push(`${e} ${cmdline}`);
  }
  for (const [pid, start] of recorded) {
    if (startTime(pid) === start && !out.some((l) => l.startsWith(`${pid} `))) out.push(`${pid} (recorded container process)`);
  }
  return out;
}

/** Mount points at or below `dir` in this mount namespace, deepest first. */
export function leftoverMounts(dir: string): string[] {
  const points = fs
    .readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((l) => l.split(' ')[4]?.replace(/\\040/g, ' '))
    .filter((p): p is string => !!p && (p === dir || p.startsWith(`${dir}/`)));
  return [...new Set(points)].sort((a, b) => b.length - a.length);
}

/** Removes what leftovers found (our own processes, by PID; lazy unmounts), for a clean machine after a failed check. */
export function sweep(found: Leftovers): void {
  for (const line of found.processes) {
    const pid = Number(line.split(' ')[0]);
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      /* gone already */
    }
  }
  for (const m of found.mounts) spawnSync('umount', ['-l', m]);
}
