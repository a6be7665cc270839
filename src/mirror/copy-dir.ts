// Opens (creating what is missing) the directory of one volume's copy, one name at a time from
// the run directory, never following a symlink: `volumes/` and `<pod uid>/` must be root's and
// closed to everyone else (0700), the copy itself root's and writable by no one else (0755, the
// mount's root as the container sees it). Whoever could write above a copy could choose what a
// container reads as its secret, so anything else is refused, not repaired.
import fs from 'node:fs';
import path from 'node:path';
import { EnvhookError } from '../errors.ts';
import { ConfinedError, fdPath, openDirAt, openRootDir } from '../fs/confined.ts';
import { checkOwnDir, COPIES_DIR, copyDir, type CopyPlace } from './layout.ts';

/** An open descriptor of the copy's directory (the caller closes it). Throws EnvhookError. */
export function openCopyDir(place: CopyPlace): number {
  const dir = copyDir(place);
  try {
    fs.mkdirSync(place.runDir, { recursive: true, mode: 0o700 });
  } catch (cause) {
    throw new EnvhookError(`cannot create run directory ${place.runDir} (${(cause as NodeJS.ErrnoException).code ?? 'error'})`, { cause });
  }
  checkOwnDir(`run directory ${place.runDir}`, fs.lstatSync(place.runDir, { throwIfNoEntry: false }), false);
  let fd = openRootDir(place.runDir);
  try {
    const steps: [string, 0o700 | 0o755][] = [
      [COPIES_DIR, 0o700],
      [place.podUid, 0o700],
      [place.volume, 0o755],
    ];
    let at = place.runDir;
    for (const [name, mode] of steps) {
      at = path.join(at, name);
      const next = openOrMake(fd, name, mode, at);
      fs.closeSync(fd);
      fd = next;
    }
    return fd;
  } catch (err) {
    fs.closeSync(fd);
    if (err instanceof ConfinedError) throw new EnvhookError(`owned copy ${dir}: ${err.reason}`, { cause: err });
    throw err;
  }
}

function openOrMake(parentFd: number, name: string, mode: 0o700 | 0o755, at: string): number {
  try {
    fs.mkdirSync(fdPath(parentFd, name), { mode });
  } catch (cause) {
    if ((cause as NodeJS.ErrnoException).code !== 'EEXIST')
      throw new EnvhookError(`cannot create ${at} (${(cause as NodeJS.ErrnoException).code ?? 'error'})`, { cause });
  }
  const fd = openDirAt(parentFd, name);
  try {
    checkOwnDir(at, fs.fstatSync(fd), mode === 0o700);
    // The umask may have narrowed a directory made here: the copy's root must be readable inside.
    if (mode === 0o755 && (fs.fstatSync(fd).mode & 0o755) !== 0o755) fs.fchmodSync(fd, 0o755);
  } catch (err) {
    fs.closeSync(fd);
    throw err;
  }
  return fd;
}
