// Confined file access inside a volume directory: no symlink is followed anywhere below the
// root, the final file must be a regular file, and it is opened without blocking. Node has no
// openat(), so each step opens `/proc/self/fd/<dirfd>/<name>` with O_NOFOLLOW: the kernel
// resolves the magic link to the already-open directory and looks up one name in it, so a
// rename or symlink swap elsewhere cannot redirect the walk.
import fs from 'node:fs';
import { EnvhookError, errnoReason } from '../errors.ts';
import { capabilityHint } from './capabilities.ts';

const { O_RDONLY, O_DIRECTORY, O_NOFOLLOW, O_NONBLOCK, O_NOCTTY } = fs.constants;
const DIR_FLAGS = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NOCTTY;
// Reopening through /proc/self/fd/<O_PATH fd> must follow that magic link, so no O_NOFOLLOW here.
const FILE_FLAGS = O_RDONLY | O_NONBLOCK | O_NOCTTY;
// Linux O_PATH (asm-generic value, as on every architecture Node supports); Node does not export it.
const O_PATH = 0o10000000;

/** Why a confined access failed: a short fixed phrase, plus the errno code where there is one. */
export class ConfinedError extends EnvhookError {
  override name = 'ConfinedError';
  readonly reason: string;
  readonly code: string | undefined;
  constructor(reason: string, code?: string, cause?: unknown) {
    super(reason, { cause });
    this.reason = reason;
    this.code = code;
  }
  get notFound(): boolean {
    return this.code === 'ENOENT';
  }
}

/** Splits a relative path into names: not absolute, no `..`, no NUL; `.` and empty names dropped. */
export function splitRelative(rel: string): string[] {
  if (rel.includes('\0')) throw new ConfinedError('path contains a NUL byte');
  if (rel.startsWith('/')) throw new ConfinedError('path must be relative');
  const names = rel.split('/').filter((n) => n !== '' && n !== '.');
  if (names.includes('..')) throw new ConfinedError("path must not contain '..'");
  if (names.length === 0) throw new ConfinedError('path is empty');
  return names;
}

/** The open directory the working directory is set to, inside withCwdAt(); else undefined. */
let cwdFd: number | undefined;
/** Where the working directory goes back to, while cwdFd is set. */
let cwdHome: string | undefined;

export function fdPath(dirFd: number, name: string): string {
  // Inside withCwdAt(), for the directory the working directory is: the bare name. The kernel
  // looks it up in the working directory, which pins the directory as the descriptor does
  // (a rename or swap of its path changes nothing), without walking /proc/self/fd/<n> for
  // every call: lstat and open are markedly cheaper that way in a walk of many files.
  if (dirFd === cwdFd && !name.includes('/')) return name;
  return `/proc/self/fd/${dirFd}/${name}`;
}

interface CwdScope {
  enter(dirFd: number): void;
  close(): void;
}

/** A scope whose `enter` moves the working directory, and whose `close` brings it back; undefined without a working directory. */
function cwdScope(): CwdScope | undefined {
  let home: string;
  try {
    home = process.cwd();
  } catch {
    return undefined;
  }
  let moved = false;
  return {
    enter(dirFd: number): void {
      cwdFd = undefined;
      try {
        process.chdir(`/proc/self/fd/${dirFd}`);
        cwdFd = dirFd;
        cwdHome = home;
        moved = true;
      } catch {
        /* fdPath keeps the /proc/self/fd form */
      }
    },
    close(): void {
      cwdFd = undefined;
      cwdHome = undefined;
      // Not back home, the process would go on in a volume's directory: that error wins over fn's.
      if (moved) returnTo(home);
    },
  };
}

/**
 * Runs `fn(enter)`, where `enter(dirFd)` makes the open directory `dirFd` the working directory
 * (through its /proc/self/fd link, never through a path) so that fdPath(dirFd, name) is just
 * `name`. The working directory is restored afterwards. Where anything here fails (no working
 * directory, chdir refused), fdPath simply keeps the /proc/self/fd form: same accesses, slower.
 */
export function withCwdAt<T>(fn: (enter: (dirFd: number) => void) => T): T {
  const scope = cwdScope();
  if (scope === undefined) return fn(() => {});
  try {
    return fn(scope.enter);
  } finally {
    scope.close();
  }
}

/**
 * The same for resumable work (a generator, mirror/steps.ts): whoever runs it lets the loop turn
 * between its steps only after leaveCwd(), so that nothing else runs in a volume's directory.
 */
export function* withCwdAtSteps<T>(fn: (enter: (dirFd: number) => void) => Generator<void, T, undefined>): Generator<void, T, undefined> {
  const scope = cwdScope();
  if (scope === undefined) return yield* fn(() => {});
  try {
    return yield* fn(scope.enter);
  } finally {
    scope.close();
  }
}

/**
 * Before the loop turns in the middle of resumable work: the working directory back home (when a
 * withCwdAtSteps walk moved it); returns what moves it back to where the walk was, for its next step.
 */
export function leaveCwd(): () => void {
  const fd = cwdFd;
  const home = cwdHome;
  if (fd === undefined || home === undefined) return () => {};
  cwdFd = undefined;
  cwdHome = undefined;
  returnTo(home);
  return () => {
    try {
      process.chdir(`/proc/self/fd/${fd}`);
      cwdFd = fd;
      cwdHome = home;
    } catch {
      /* fdPath keeps the /proc/self/fd form (the scope's close still returns home) */
    }
  };
}

function returnTo(home: string): void {
  try {
    process.chdir(home);
  } catch (cause) {
    throw new EnvhookError(`cannot return to the working directory ${home}`, { cause });
  }
}

/** Opens the root directory itself (a kubelet-made directory) without following a final symlink. */
export function openRootDir(dir: string): number {
  try {
    return fs.openSync(dir, DIR_FLAGS);
  } catch (cause) {
    throw symlinkOrErrno(cause, dir);
  }
}

/** Opens directory `name` inside the open directory `dirFd`, refusing symlinks. */
export function openDirAt(dirFd: number, name: string): number {
  try {
    return fs.openSync(fdPath(dirFd, name), DIR_FLAGS);
  } catch (cause) {
    throw symlinkOrErrno(cause, fdPath(dirFd, name));
  }
}

/** O_DIRECTORY|O_NOFOLLOW on a symlink gives ENOTDIR: say which it was. */
function symlinkOrErrno(cause: unknown, p: string): ConfinedError {
  if ((cause as NodeJS.ErrnoException).code === 'ENOTDIR' && fs.lstatSync(p, { throwIfNoEntry: false })?.isSymbolicLink()) {
    return new ConfinedError('a path element is a symbolic link', 'ELOOP', cause);
  }
  return fromErrno(cause, 'directory');
}

/** Walks `names` from `rootFd`; returns an fd of the last directory (caller closes it). */
export function openDirPathAt(rootFd: number, names: readonly string[]): number {
  let fd = rootFd;
  try {
    for (const name of names) {
      const next = openDirAt(fd, name);
      if (fd !== rootFd) fs.closeSync(fd);
      fd = next;
    }
    return fd === rootFd ? fs.openSync(fdPath(rootFd, '.'), DIR_FLAGS) : fd;
  } catch (err) {
    if (fd !== rootFd) fs.closeSync(fd);
    throw err;
  }
}

export interface OpenedFile {
  fd: number;
  stat: fs.Stats;
}

/** `name` in `dirFd` opened O_PATH|O_NOFOLLOW: a handle for fstat, never the file's own open. */
function openPathAt(dirFd: number, name: string): number {
  try {
    return fs.openSync(fdPath(dirFd, name), O_PATH | O_NOFOLLOW);
  } catch (cause) {
    throw fromErrno(cause, 'file');
  }
}

/**
 * Opens regular file `name` in directory `dirFd`. The name is first opened with O_PATH|O_NOFOLLOW,
 * which never runs a driver's or FIFO's open (no side effect, no blocking), and that handle is
 * checked with fstat. Only a regular file is then reopened for reading through its own
 * /proc/self/fd magic link, which names that very inode: a swap of the name for a FIFO, device
 * or symlink after the check cannot be opened in its place (an lstat-then-open would be racy).
 */
export function openFileAt(dirFd: number, name: string): OpenedFile {
  return openFileUnless(dirFd, name, () => false)!;
}

/**
 * openFileAt, except that `known` is asked first with the checked handle's fstat (a regular
 * file, reached without a symlink): when it answers true, the file is not opened for reading and
 * undefined is returned (a reader that holds what this very file gave it before).
 */
export function openFileUnless(dirFd: number, name: string, known: (checked: fs.Stats) => boolean): OpenedFile | undefined {
  const pathFd = openPathAt(dirFd, name);
  try {
    const checked = fs.fstatSync(pathFd);
    if (!checked.isFile()) throw new ConfinedError(`is ${fileKind(checked)}`);
    if (known(checked)) return undefined;
    let fd: number;
    try {
      fd = fs.openSync(`/proc/self/fd/${pathFd}`, FILE_FLAGS);
    } catch (cause) {
      throw fromErrno(cause, 'file');
    }
    const stat = fs.fstatSync(fd);
    if (!stat.isFile() || stat.ino !== checked.ino || stat.dev !== checked.dev) {
      fs.closeSync(fd);
      throw new ConfinedError('changed while being opened');
    }
    return { fd, stat };
  } finally {
    fs.closeSync(pathFd);
  }
}

/** Opens `rel` below `root` (see splitRelative), every step confined. */
export function openConfined(root: string, rel: string): OpenedFile {
  const names = splitRelative(rel);
  const rootFd = openRootDir(root);
  try {
    return openConfinedAt(rootFd, names);
  } finally {
    fs.closeSync(rootFd);
  }
}

/** Opens the file `names` (from splitRelative) below the open directory `baseFd`, every step confined. */
export function openConfinedAt(baseFd: number, names: readonly string[]): OpenedFile {
  return openConfinedUnless(baseFd, names)!;
}

/**
 * openConfinedAt with openFileUnless's `known`. A file directly in the base directory is first
 * looked at with one lstat of its name there (the same lookup as the O_PATH|O_NOFOLLOW open: one
 * name in the open directory, a final symlink not followed): a regular file `known` answers true
 * for costs that one call, not an open, an fstat and a close. Anything else takes the checked
 * open, which reports what it finds (and asks `known` again).
 */
export function openConfinedUnless(
  baseFd: number,
  names: readonly string[],
  known?: (checked: fs.Stats) => boolean,
): OpenedFile | undefined {
  const last = names[names.length - 1]!;
  // A file directly in the base directory: opened from it, with no copy of its descriptor.
  if (names.length === 1) {
    if (known !== undefined && knownAt(baseFd, last, known)) return undefined;
    return openFileUnless(baseFd, last, known ?? NEVER);
  }
  const dirFd = openDirPathAt(baseFd, names.slice(0, -1));
  try {
    return openFileUnless(dirFd, last, known ?? NEVER);
  } finally {
    fs.closeSync(dirFd);
  }
}

const NEVER = (): boolean => false;

/** True when `name` in `dirFd` is a regular file (not followed) that `known` answers true for; false on anything else, errors included. */
function knownAt(dirFd: number, name: string, known: (checked: fs.Stats) => boolean): boolean {
  let st: fs.Stats | undefined;
  try {
    st = fs.lstatSync(fdPath(dirFd, name), { throwIfNoEntry: false });
  } catch {
    return false;
  }
  return st !== undefined && st.isFile() && known(st);
}

/**
 * Reads at most `limit` bytes; a larger file is refused without being read whole. The buffer
 * starts at the size fstat gave (+1, to see growth) and grows only if the file does while it is
 * read: a buffer of `limit` bytes per file made every container start allocate (and the
 * resident NRI plugin carry as garbage) 64 KiB per env file, for files of a few KiB.
 */
export function readBounded(file: OpenedFile, limit: number): Buffer {
  if (file.stat.size > limit) throw new ConfinedError(`larger than ${limit} bytes`);
  let buf: Buffer = Buffer.allocUnsafe(file.stat.size + 1);
  let total = 0;
  for (;;) {
    if (total === buf.length) buf = grown(buf, Math.min(limit + 1, buf.length * 2));
    let n: number;
    try {
      n = fs.readSync(file.fd, buf, total, buf.length - total, null);
    } catch (cause) {
      buf.fill(0, 0, total);
      throw fromErrno(cause, 'file');
    }
    if (n === 0) break;
    total += n;
    if (total > limit) {
      buf.fill(0, 0, total);
      throw new ConfinedError(`larger than ${limit} bytes`);
    }
  }
  return buf.subarray(0, total);
}

/** A larger copy of `buf`; the old one is zeroed, as callers zero what they are given. */
function grown(buf: Buffer, size: number): Buffer {
  const next = Buffer.allocUnsafe(size);
  buf.copy(next);
  buf.fill(0);
  return next;
}

/** Opens, reads (bounded) and closes `rel` below `root`. */
export function readConfined(root: string, rel: string, limit: number): Buffer {
  const file = openConfined(root, rel);
  try {
    return readBounded(file, limit);
  } finally {
    fs.closeSync(file.fd);
  }
}

/** What a file system entry is, as a line says it: `a regular file`, `a directory`, `a FIFO`, … */
export function fileKind(st: fs.Stats): string {
  if (st.isFile()) return 'a regular file';
  if (st.isSymbolicLink()) return 'a symbolic link';
  if (st.isDirectory()) return 'a directory';
  if (st.isFIFO()) return 'a FIFO';
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isBlockDevice()) return 'a block device';
  if (st.isSocket()) return 'a socket';
  return 'not a regular file';
}

function fromErrno(cause: unknown, what: 'file' | 'directory'): ConfinedError {
  const code = (cause as NodeJS.ErrnoException).code;
  switch (code) {
    case 'ENOENT':
      return new ConfinedError('not found', code, cause);
    case 'ELOOP':
      return new ConfinedError(what === 'directory' ? 'a path element is a symbolic link' : 'is a symbolic link', code, cause);
    case 'ENOTDIR':
      return new ConfinedError('a path element is not a directory', code, cause);
    case 'EACCES':
    case 'EPERM':
      return new ConfinedError(`permission denied${capabilityHint(cause, ['DAC_OVERRIDE'])}`, code, cause);
    case 'EISDIR':
      return new ConfinedError('is a directory', code, cause);
    default:
      return new ConfinedError(`cannot open: ${errnoReason(cause)}`, code, cause);
  }
}

// For ownership (docs/design.md#ownership): the atomic writer's `..data` link is read, never followed.

/**
 * Target of symbolic link `name` in `dirFd` (readlink does not follow the final name), or
 * undefined when there is no such entry. Anything other than a symlink is refused.
 */
export function readLinkAt(dirFd: number, name: string): string | undefined {
  try {
    return fs.readlinkSync(fdPath(dirFd, name));
  } catch (cause) {
    const code = (cause as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    if (code === 'EINVAL') throw new ConfinedError('is not a symbolic link', code, cause);
    throw fromErrno(cause, 'file');
  }
}

/**
 * Pins regular file `name` in `dirFd` for a change of owner, after the caller's lstat `before`
 * said it is one: an O_PATH|O_NOFOLLOW descriptor (opening it runs no driver's or FIFO's open),
 * whose fstat must show a regular file, the very inode `before` saw: a swap of the name since the
 * lstat is detected rather than acted on. The file is never opened for reading or writing.
 */
export function pinFileAt(dirFd: number, name: string, before: fs.Stats): OpenedFile {
  const fd = openPathAt(dirFd, name);
  let stat: fs.Stats;
  try {
    stat = fs.fstatSync(fd);
  } catch (cause) {
    fs.closeSync(fd);
    throw fromErrno(cause, 'file');
  }
  if (!stat.isFile() || stat.ino !== before.ino || stat.dev !== before.dev) {
    fs.closeSync(fd);
    throw new ConfinedError('changed while being opened');
  }
  return { fd, stat };
}

/**
 * Sets the owner (group unchanged) of the inode a pinFileAt descriptor holds, through its
 * /proc/self/fd magic link, which names that inode and no path (glibc changes the mode of an
 * O_PATH descriptor the same way): fchown itself refuses O_PATH descriptors. Three syscalls
 * fewer per file than reopening it for reading first.
 */
export function chownPinned(file: OpenedFile, uid: number): void {
  fs.chownSync(`/proc/self/fd/${file.fd}`, uid, -1);
}
