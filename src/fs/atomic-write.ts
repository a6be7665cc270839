// Atomic replacement of a file: a temporary file in the same directory, written, fsynced,
// renamed over the target, then the directory fsynced. A crash leaves the old or the new
// file, never a torn one. An existing file's mode and owner are kept. A crash before the
// rename leaves the temporary file (for config.json: the resolved env, values included): the
// next write of the same file removes it (stale-temp.ts).
import fs from 'node:fs';
import path from 'node:path';
import { EnvhookError, errnoReason } from '../errors.ts';
import { removeStaleTemps, tempName } from './stale-temp.ts';

/** The points of atomicWrite where a crash leaves a different state on disk. */
export type WriteStep = 'opened' | 'written' | 'synced' | 'renamed' | 'dir-synced';

// Test-only fault switch (test/security/crash.test.ts kills the process at each step). It is a
// module variable set by a function call only: no environment variable, flag, config key or
// annotation reaches it, so it stays inert in production.
let faultAt: ((step: WriteStep) => void) | undefined;
export function setWriteFault(fn: ((step: WriteStep) => void) | undefined): void {
  faultAt = fn;
}

export interface AtomicWriteOptions {
  /** Mode of a file that does not exist yet (default 0644). */
  newFileMode?: number;
  /** The file's mode whatever the file it replaces had (one an older envhook wrote wider); owner kept. */
  mode?: number;
  /** The file's group (with `mode`: an admin's group for envhook's own files, fs/file-group.ts). */
  gid?: number | undefined;
  /** Create missing parent directories (0755). */
  mkdir?: boolean;
  /**
   * fsync the file and its directory (default). false: still atomic for readers (they see the
   * old or the new file), not durable across a power loss; for state that a restart rewrites
   * anyway (the NRI status file), where an fsync would block its writer for milliseconds.
   */
  durable?: boolean;
}

const TMP_FLAGS = fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW;

export function atomicWrite(
  file: string,
  data: string | Uint8Array,
  { newFileMode = 0o644, mode, gid, mkdir = false, durable = true }: AtomicWriteOptions = {},
): void {
  const dir = path.dirname(file);
  if (mkdir) fs.mkdirSync(dir, { recursive: true, mode: 0o755 });
  // Unique among live processes by pid and clock; O_EXCL refuses any file already there. (No
  // node:crypto for a random suffix: loading it would cost every container start.)
  const tmp = path.join(dir, tempName(path.basename(file), process.hrtime.bigint().toString(36)));
  removeStaleTemps(dir, path.basename(file));
  let fd: number | undefined;
  try {
    const st = fs.statSync(file, { throwIfNoEntry: false });
    // 0600 until the content is complete; the final mode is set on the descriptor.
    fd = fs.openSync(tmp, TMP_FLAGS, 0o600);
    faultAt?.('opened');
    writeAll(fd, data);
    faultAt?.('written');
    fs.fchmodSync(fd, mode ?? (st ? st.mode & 0o7777 : newFileMode));
    if (st && process.getuid?.() === 0) fs.fchownSync(fd, st.uid, gid ?? st.gid);
    else if (gid !== undefined) fs.fchownSync(fd, -1, gid);
    if (durable) fs.fsyncSync(fd);
    faultAt?.('synced');
    fs.closeSync(fd);
    fd = undefined;
    fs.renameSync(tmp, file);
    faultAt?.('renamed');
  } catch (cause) {
    if (fd !== undefined) fs.closeSync(fd);
    fs.rmSync(tmp, { force: true });
    throw new EnvhookError(`cannot write ${file}: ${errnoReason(cause)}`, { cause });
  }
  if (durable) fsyncDir(dir);
  faultAt?.('dir-synced');
}

/**
 * 64 KiB at a time. The page cache keeps a file in folios the size of the writes that made it,
 * and a process maps an executable's pages folio by folio: the single executable (~120 MiB)
 * written in one write counted ~27 MiB more RSS (RssFile 66.5 against 39.6 MiB, idle `envhook
 * nri` on Linux 6.18, ext4) in the resident NRI plugin than written 64 KiB at a time or by cp.
 */
export const WRITE_CHUNK = 65536;

function writeAll(fd: number, data: string | Uint8Array): void {
  if (typeof data === 'string' || data.length <= WRITE_CHUNK) return fs.writeFileSync(fd, data);
  for (let off = 0; off < data.length;) off += fs.writeSync(fd, data, off, Math.min(WRITE_CHUNK, data.length - off));
}

function fsyncDir(dir: string): void {
  try {
    const fd = fs.openSync(dir, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY);
    try {
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
  } catch (cause) {
    throw new EnvhookError(`cannot sync directory ${dir}: ${errnoReason(cause)}`, { cause });
  }
}
