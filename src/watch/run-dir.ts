// The run directory (a setting, docs/design.md#settings: `runDir`, default /run/envhook) holds one owners
// record a pod: `owners/`, the shim's for `envhook watch`, and `nri-owners/`, the pods the
// resident NRI plugin watches, for the next plugin process (nri/worker/pod-watch.ts). Whoever can write there chooses which files get which owner, so it must be
// root's alone: owned by this process's user (root), no write for group or others, not a
// symlink. The shim creates it 0700; the watcher refuses one that is not so.
import fs from 'node:fs';
import path from 'node:path';
import { EnvhookError, errnoReason } from '../errors.ts';
import { makeDirs } from '../fs/make-dirs.ts';

export const DEFAULT_RUN_DIR = '/run/envhook';
export const RECORDS = 'owners';
export const NRI_RECORDS = 'nri-owners';
export type RecordsKind = typeof RECORDS | typeof NRI_RECORDS;

/** `<runDir>/owners` (or `nri-owners`), where the records are. */
export function recordsDir(runDir: string, kind: RecordsKind = RECORDS): string {
  return path.join(runDir, kind);
}

/** Creates runDir and its records directory (0700) where missing; checks both. */
export function ensureRunDir(runDir: string, kind: RecordsKind = RECORDS): string {
  const dir = recordsDir(runDir, kind);
  try {
    makeDirs(runDir, 0o700);
  } catch (cause) {
    throw new EnvhookError(`cannot create run directory ${runDir}: ${errnoReason(cause)}`, { cause });
  }
  try {
    checkPrivate(runDir);
    fs.mkdirSync(dir, { mode: 0o700 });
  } catch (cause) {
    if (cause instanceof EnvhookError) throw cause;
    if ((cause as NodeJS.ErrnoException).code !== 'EEXIST')
      throw new EnvhookError(`cannot create run directory ${dir}: ${errnoReason(cause)}`, { cause });
  }
  checkPrivate(dir);
  return dir;
}

/** Throws unless `dir` is a real directory owned by this user and writable by no one else. */
export function checkPrivate(dir: string): void {
  const st = fs.lstatSync(dir, { throwIfNoEntry: false });
  if (st === undefined) throw new EnvhookError(`run directory ${dir} does not exist`);
  if (!st.isDirectory()) throw new EnvhookError(`run directory ${dir} is not a directory`);
  const me = process.geteuid?.() ?? 0;
  if (me !== 0 && st.uid === 0) throw new EnvhookError(`run directory ${dir} is root's: run as root`);
  if (st.uid !== me || (st.mode & 0o022) !== 0) {
    throw new EnvhookError(`run directory ${dir} must be owned by ${me === 0 ? 'root' : `UID ${me}`} and not writable by group or others`);
  }
}

/**
 * A daemon's start (`envhook nri`): the run directory exists or can be made (0755: the status
 * file in it is read by `envhook status` without root), is root's alone as checkPrivate wants,
 * and can be written; else one line, before anything starts.
 */
export function checkRunDirUsable(runDir: string): void {
  try {
    makeDirs(runDir, 0o755);
  } catch (cause) {
    throw new EnvhookError(`cannot create run directory ${runDir}: ${errnoReason(cause)}`, { cause });
  }
  checkPrivate(runDir);
  try {
    fs.accessSync(runDir, fs.constants.W_OK);
  } catch (cause) {
    throw new EnvhookError(`run directory ${runDir} cannot be written: ${errnoReason(cause)}`, { cause });
  }
}
