// What a daemon run may leave behind under its temporary directory: processes whose command line
// names it (containerd, shims, the front, envhook), processes whose PIDs a test recorded
// (container processes, whose command lines name nothing of ours), and mounts below it.
import fs from 'node:fs';
import { spawnSync } from 'node:child_process';

export interface Leftovers {
  processes: string[];
  mounts: string[];
}

/** Start time of a process (field 22 of /proc/PID/stat), or undefined when it is gone. */
export function startTime(pid: number): string | undefined {
  try {
    return fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ')[19];
  } catch {
    return undefined;
  }
}

/** Live processes naming `dir` in their command line, and recorded ones still alive (pid and start time). */
export function leftoverProcesses(dir: string, recorded: ReadonlyMap<number, string> = new Map()): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(e) || Number(e) === process.pid) continue;
    let cmdline = '';
    try {
      cmdline = fs.readFileSync(`/proc/${e}/cmdline`, 'utf8').replace(/\0/g, ' ').trim();
    } catch {
      continue;
    }
    if (cmdline.includes(dir)) out.push(`${e} ${cmdline}`);
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
