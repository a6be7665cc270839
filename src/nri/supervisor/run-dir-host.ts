// Is the run directory where the runtime will look? envhook hands the runtime its owned copies
// (`<runDir>/volumes/<pod uid>/<volume>`) as mount sources, and the runtime resolves them in its
// own mount namespace, the host's. A DaemonSet whose run directory's hostPath differs from its
// mountPath gave paths the host does not have, and every pod with owners failed at start
// (docs/ownership.md#the-run-directory-is-the-hosts). What can be seen from inside a pod:
// - /proc/self/mountinfo: the mount that holds the run directory, its device and its root within
//   that file system (a bind mount of a host directory has that directory as its root);
// - /proc/1/mountinfo: the mounts of PID 1's namespace, the host's when the pod has the host's
//   PID namespace (the chart's DaemonSet has), readable without privilege.
// Where PID 1's table is another than ours, the run directory's host paths are those of the host
// mounts of the same device whose root holds it: one of them must be the run directory's own
// path. Where it is the same (on the node itself, or a pod without the host's PID namespace),
// the one thing known is the directory's path within its file system, which must end the run
// directory's path (a bind mount from elsewhere has another tail).
import fs from 'node:fs';
import path from 'node:path';
import { EnvhookError } from '../../errors.ts';

export interface MountEntry {
  /** major:minor of the file system. */
  dev: string;
  /** The mount's root within its file system. */
  root: string;
  /** Where it is mounted, in the namespace of the table. */
  mountPoint: string;
}

/** mountinfo's octal escapes (\040 for a space…) turned back into bytes. */
function unescape(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));
}

export function parseMountinfo(text: string): MountEntry[] {
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => {
      const f = l.split(' ');
      return { dev: f[2]!, root: unescape(f[3]!), mountPoint: unescape(f[4]!) };
    });
}

const under = (p: string, dir: string) => p === dir || p.startsWith(dir === '/' ? '/' : `${dir}/`);

/** The mount that holds `p` (an absolute, resolved path): the deepest mount point; of equal ones, the last mounted. */
export function mountOf(mounts: MountEntry[], p: string): MountEntry | undefined {
  let best: MountEntry | undefined;
  for (const m of mounts) if (under(p, m.mountPoint) && (!best || m.mountPoint.length >= best.mountPoint.length)) best = m;
  return best;
}

/**
 * Undefined when `runDir` (resolved) is at its host path, else what the host has instead, for the
 * refusal: the host paths of the directory, or why none is known.
 */
export function hostMismatch(runDir: string, self: MountEntry[], host: MountEntry[] | undefined): string | undefined {
  const own = mountOf(self, runDir);
  if (!own) return undefined;
  const within = path.posix.join(own.root, path.posix.relative(own.mountPoint, runDir));
  if (host) {
    const paths = host
      .filter((m) => m.dev === own.dev && under(within, m.root))
      .map((m) => path.posix.join(m.mountPoint, path.posix.relative(m.root, within)));
    if (paths.includes(runDir)) return undefined;
    return paths.length
      ? `the host has this directory at ${[...new Set(paths)].join(', ')}`
      : 'the host mounts no file system of this directory';
  }
  if (within === '/' || runDir.endsWith(within)) return undefined;
  return `this directory is ${within} of its file system, mounted at another path`;
}

/** The start check of `envhook nri`: one line naming --run-dir when the runtime would not find the run directory's copies. */
export function checkRunDirAtHostPath(runDir: string, proc = '/proc'): void {
  const read = (p: string) => {
    try {
      return fs.readFileSync(p, 'utf8');
    } catch {
      return undefined;
    }
  };
  const selfText = read(path.join(proc, 'self/mountinfo'));
  if (selfText === undefined) return; // no /proc: nothing to compare, as before this check
  const hostText = read(path.join(proc, '1/mountinfo'));
  const host = hostText !== undefined && hostText !== selfText ? parseMountinfo(hostText) : undefined;
  const resolved = fs.realpathSync(runDir);
  const why = hostMismatch(resolved, parseMountinfo(selfText), host);
  if (why === undefined) return;
  throw new EnvhookError(
    `--run-dir ${runDir}: ${why}, and the runtime mounts owned copies from the run directory by its path on the host: mount the host's ${resolved} at that same path (a DaemonSet's hostPath and mountPath equal, as the chart's runDir makes them), or set --run-dir to the host's path`,
  );
}
