// The temporary files of atomicWrite (atomic-write.ts) and their removal after a crash. A
// temporary file is `.<name>.envhook-<pid>-<pidns>-<clock>`: the writer's pid, the inode of its
// PID namespace (/proc/self/ns/pid) and a clock. Before each write of `<name>`, the temporary
// files of `<name>` that a dead writer left are removed: those whose PID namespace is this
// process's and whose pid is not alive (kill 0: no such process), or is this very process's (it
// writes one file at a time, and its own temporary file is not made yet: one with its pid is
// from an earlier process of the same number). A concurrent writer is alive, so its file is
// kept, and a file from another PID namespace (a DaemonSet's pod without hostPID, say) is kept:
// its pid means nothing here. A name without the namespace (`<pid>-<clock>`, envhook before
// this) counts as this namespace's. A pid reused by a live process keeps its file until later.
import fs from 'node:fs';
import path from 'node:path';

const MARK = '.envhook-';

let ownNs: string | undefined | null = null;

/** The inode of this process's PID namespace, in decimal; undefined where /proc cannot say. */
function pidNamespace(): string | undefined {
  if (ownNs === null) {
    try {
      ownNs = /^pid:\[(\d+)\]$/.exec(fs.readlinkSync('/proc/self/ns/pid'))?.[1];
    } catch {
      ownNs = undefined;
    }
  }
  return ownNs;
}

export function tempName(base: string, clock: string): string {
  return `.${base}${MARK}${process.pid}-${pidNamespace() ?? '0'}-${clock}`;
}

/** Whether pid `pid` (of this PID namespace) is a process other than this one. */
function isOtherLiveProcess(pid: number): boolean {
  if (pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== 'ESRCH'; // EPERM: alive, someone else's
  }
}

/**
 * Removes the temporary files of `base` in `dir` that a dead writer left (see above). Best
 * effort: the write goes on whatever happens here (nothing is followed: unlink removes a name).
 */
export function removeStaleTemps(dir: string, base: string): void {
  const ns = pidNamespace();
  if (ns === undefined) return;
  const prefix = `.${base}${MARK}`;
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    const m = /^(\d+)-(?:(\d+)-)?[0-9a-z]+$/.exec(name.slice(prefix.length));
    if (!m || (m[2] !== undefined && m[2] !== ns) || isOtherLiveProcess(Number(m[1]))) continue;
    try {
      fs.unlinkSync(path.join(dir, name));
    } catch {
      /* gone already (another writer's cleanup), or not a file: left */
    }
  }
}
