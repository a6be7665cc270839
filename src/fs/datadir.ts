// The directory holding a volume's real files. The kubelet's atomic writer lays a volume out as
//   ..data -> ..2026_11_22_03_20_00.123456789    (symlink, swapped atomically on updates)
//   ..2026_11_22_03_20_00.123456789/<files>      (the real files, nested dirs for nested paths)
//   <name> -> ..data/<name>                      (one symlink per top-level visible name)
// We read `..data` (never follow it), require one `..`-name in the volume, and open that
// directory with O_NOFOLLOW, so nothing outside the volume is ever reached through a link.
//
// A directory with no `..data` (a --volume override to a plain directory, or a layout the
// atomic writer did not make) is walked itself, still without following any symlink; its
// top-level `..`-names are skipped: the atomic writer reserves them for data in flux.
import fs from 'node:fs';
import { EnvhookError } from '../errors.ts';
import { ConfinedError, openDirAt, openRootDir, readLinkAt } from './confined.ts';

export const DATA_LINK = '..data';

export interface DataDir {
  /** Open directory of the real files (caller closes with closeDataDir). */
  fd: number;
  /** The timestamped directory's name, or undefined for a plain directory. */
  timestamped: string | undefined;
  dev: number;
}

/** A single name starting with `..` that the atomic writer could have made. */
export function isTimestampedName(target: string): boolean {
  return (
    target.startsWith('..') &&
    target.length > 2 &&
    !target.includes('/') &&
    !target.includes('\0') &&
    target !== DATA_LINK &&
    target !== '..data_tmp'
  );
}

export function openDataDir(volume: string, dir: string): DataDir {
  const fail = (what: string, cause?: unknown) => new EnvhookError(`volume "${volume}": ${what}`, { cause });
  let rootFd: number;
  try {
    rootFd = openRootDir(dir);
  } catch (err) {
    throw fail(`cannot open the volume directory ${dir}: ${reasonOf(err)}`, err);
  }
  try {
    return openDataDirAt(rootFd);
  } catch (err) {
    throw fail(reasonOf(err), err);
  } finally {
    fs.closeSync(rootFd);
  }
}

/**
 * openDataDir on a volume directory the caller opened (the env reader, which tells a volume
 * that is not mounted from a broken one). Throws ConfinedError with no errno code: a dangling or
 * foreign `..data` is a broken volume, never a "not found" an optional reference could skip.
 */
export function openDataDirAt(rootFd: number): DataDir {
  let target: string | undefined;
  try {
    target = readLinkAt(rootFd, DATA_LINK);
  } catch (err) {
    throw new ConfinedError(`${DATA_LINK} ${reasonOf(err)}`, undefined, err);
  }
  if (target === undefined) {
    const fd = openDirAt(rootFd, '.');
    return { fd, timestamped: undefined, dev: fs.fstatSync(fd).dev };
  }
  if (!isTimestampedName(target)) throw new ConfinedError(`${DATA_LINK} does not point to a timestamped directory inside the volume`);
  let fd: number;
  try {
    fd = openDirAt(rootFd, target);
  } catch (err) {
    throw new ConfinedError(`${DATA_LINK} points to ${JSON.stringify(target)}: ${reasonOf(err)}`, undefined, err);
  }
  return { fd, timestamped: target, dev: fs.fstatSync(fd).dev };
}

export function closeDataDir(d: DataDir): void {
  fs.closeSync(d.fd);
}

function reasonOf(err: unknown): string {
  if (err instanceof ConfinedError) return err.reason;
  throw err;
}
