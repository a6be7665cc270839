// The owned copies in the run directory hold the content of secret volumes, which the kubelet
// keeps in memory on purpose (a tmpfs a volume): on a disk they would outlive the pod, a reboot,
// the node itself (docs/ownership.md#the-run-directory-in-memory). Every process that writes
// copies checks where the run directory is before it writes one: the shim's create (for a pod
// that asks for owners), `envhook watch` and `envhook nri` at their start, and `envhook doctor`.
// The setting runDirOnDisk chooses what happens on another file system: `refuse` (one line, no
// copy written, a daemon does not start) or `warn` (the default: one line on stderr, and go on).
// The file system is the one the directory is on, or, while it does not exist yet, the one of
// the nearest directory above it (where it will be made).
import fs from 'node:fs';
import path from 'node:path';
import { EnvhookError } from '../errors.ts';
import type { Logger } from '../log.ts';
import type { RunDirOnDisk } from '../settings.ts';

const TMPFS_MAGIC = 0x01021994;
const RAMFS_MAGIC = 0x858458f6;
/** statfs f_type of the file systems a run directory is likely on (linux/magic.h), for the line. */
const NAMES = new Map<number, string>([
  [TMPFS_MAGIC, 'tmpfs'],
  [RAMFS_MAGIC, 'ramfs'],
  [0xef53, 'ext2/ext3/ext4'],
  [0x58465342, 'xfs'],
  [0x9123683e, 'btrfs'],
  [0x794c7630, 'overlayfs'],
  [0x2fc12fc1, 'zfs'],
  [0x6969, 'nfs'],
  [0x65735546, 'fuse'],
  [0x01021997, 'v9fs'],
]);

export interface RunDirStorage {
  /** The directory whose file system was read: the run directory, or the nearest one above it. */
  at: string;
  /** `tmpfs`, `ext2/ext3/ext4`, …, or `file system type 0x…`. */
  type: string;
  inMemory: boolean;
}

/** Where `runDir` is (or will be made); `real` maps a host path to this process's (doctor's --root). */
export function runDirStorage(runDir: string, real: (hostPath: string) => string = (p) => p): RunDirStorage {
  let at = runDir;
  for (;;) {
    try {
      const { type } = fs.statfsSync(real(at));
      return {
        at,
        type: NAMES.get(type) ?? `file system type 0x${type.toString(16)}`,
        inMemory: type === TMPFS_MAGIC || type === RAMFS_MAGIC,
      };
    } catch (err) {
      const parent = path.dirname(at);
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || parent === at) throw err;
      at = parent;
    }
  }
}

/** What a run directory on disk is, in the words every line uses. */
export function onDiskWhat(runDir: string, s: RunDirStorage, copies = 'would be written'): string {
  const where =
    s.at === runDir ? `run directory ${runDir} is on ${s.type}` : `run directory ${runDir} would be made on ${s.type} (${s.at})`;
  return `${where}, not tmpfs: owned copies of secret volumes ${copies} to disk`;
}

/**
 * Checks the run directory before copies are written to it: nothing in memory, under `refuse`,
 * throws the one line (what to do: a tmpfs, or the setting); under `warn`, returns the warning
 * line for the caller to print on stderr and log. Undefined: in memory. `flag`: the command has
 * a --run-dir-on-disk flag to name (the shim has none).
 */
export function checkRunDirInMemory(runDir: string, onDisk: RunDirOnDisk, flag: boolean): string | undefined {
  let s: RunDirStorage;
  try {
    s = runDirStorage(runDir);
  } catch {
    return undefined; // not readable: the run directory's own checks say why, where it is made
  }
  if (s.inMemory) return undefined;
  const setting = `runDirOnDisk "warn" (${flag ? '--run-dir-on-disk warn, ' : ''}ENVHOOK_RUN_DIR_ON_DISK=warn)`;
  if (onDisk === 'refuse') throw new EnvhookError(`${onDiskWhat(runDir, s)}: mount a tmpfs at ${runDir}, or allow it with ${setting}`);
  return `warning: ${onDiskWhat(runDir, s, 'are written')} (runDirOnDisk is "warn"): mount a tmpfs at ${runDir}`;
}

/**
 * checkRunDirInMemory with its warning in the log; `stderr`: also as a line `envhook: warning: …`
 * on stderr (the shim, whose log is a file or nowhere; a daemon logs to stderr by default).
 */
export function checkRunDirForCopies(runDir: string, onDisk: RunDirOnDisk, flag: boolean, log: Logger, stderr = false): void {
  const warning = checkRunDirInMemory(runDir, onDisk, flag);
  if (warning === undefined) return;
  if (stderr) process.stderr.write(`envhook: ${warning}\n`);
  log.warn({ runDir }, warning);
}
