// What the instance lock (lock.ts) is named after: the runtime's NRI socket as a file, not as a
// path. Two paths can name one socket (`/var/run/nri/nri.sock` through the usual `/var/run`
// symlink, `/run/nri/nri.sock`), and one path can name two sockets (two runtimes' directories
// mounted at the same place in different mount namespaces: a DaemonSet pod and an envhook run
// beside it on the host). The key is the socket directory's device and inode number, which are
// the same in every mount namespace, and the socket's name in it. Not the socket's own inode:
// the runtime removes and re-creates its socket at every start (NRI's startListener), and the
// lock must span that, so that the plugin the runtime starts anew meets the one still running.
// And the directory's birth time (statx; 0 where the file system keeps none): a directory removed
// and another made gets the freed inode number at once on ext4 and tmpfs, and without the birth
// time the new one (another runtime's, or a test's) would be taken for the old.
// A directory not there yet (the runtime never started): the nearest existing one above it, with
// the names below it.
import fs from 'node:fs';
import path from 'node:path';
import { EnvhookError, errnoReason } from '../../errors.ts';

/** Symbolic links followed at most, as the kernel's limit (ELOOP). */
const MAX_LINKS = 40;

/**
 * `dev:ino:birth:name` for the socket at `socketPath` as a process with `root` as `/` sees it (the
 * installer's `--root`): symbolic links are followed inside `root`, an absolute target from `root`.
 */
export function socketKey(socketPath: string, root = '/'): string {
  const abs = path.posix.resolve('/', socketPath);
  const { existing, rest } = resolveUnder(root, path.posix.dirname(abs));
  let st: fs.BigIntStats;
  try {
    st = fs.statSync(existing, { bigint: true });
  } catch (err) {
    throw new EnvhookError(`cannot read the NRI socket's directory ${path.posix.dirname(abs)}: ${errnoReason(err)}`, { cause: err });
  }
  return `${st.dev}:${st.ino}:${st.birthtimeNs}:${[...rest, path.posix.basename(abs)].join('/')}`;
}

/**
 * The deepest existing directory on `dir` (absolute, as seen from `root`), as a path of this
 * process, and the names below it that do not exist (yet).
 */
export function resolveUnder(root: string, dir: string): { existing: string; rest: string[] } {
  let pending = names(dir);
  let done: string[] = [];
  let links = 0;
  while (pending.length > 0) {
    const name = pending.shift()!;
    if (name === '..') {
      done.pop();
      continue;
    }
    const here = path.join(root, ...done, name);
    const st = fs.lstatSync(here, { throwIfNoEntry: false });
    if (st === undefined || (!st.isDirectory() && !st.isSymbolicLink()))
      return { existing: path.join(root, ...done), rest: tidy([name, ...pending]) };
    if (!st.isSymbolicLink()) {
      done.push(name);
      continue;
    }
    if (++links > MAX_LINKS) throw new EnvhookError(`cannot read the NRI socket's directory ${dir}: too many levels of symbolic links`);
    const target = fs.readlinkSync(here);
    if (target.startsWith('/')) done = [];
    pending = [...names(target), ...pending];
  }
  return { existing: path.join(root, ...done), rest: [] };
}

const names = (p: string): string[] => p.split('/').filter((n) => n !== '' && n !== '.');

/** Names below a missing directory: `..` takes back the name before it (nothing there to follow). */
function tidy(list: string[]): string[] {
  const out: string[] = [];
  for (const n of list)
    if (n === '..') out.pop();
    else out.push(n);
  return out;
}
