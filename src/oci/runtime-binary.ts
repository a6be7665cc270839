// The one place that looks programs up on PATH (findExecutable: chroot, chrt) and finds a
// runtime's executable — containerd, crio, runc, the OCI runtime the front execs — and runs it.
// Used by install (its checks), the shim (the runtime it execs), status and the NRI worker's
// chrt. "Not a front": a file carrying the front's marker line is never taken for a real
// runtime, so a misconfiguration fails instead of looping (runtimeFault says why a path is none).
//
// A root is the node (`--root`, /host in the installer DaemonSet): a binary is looked up under it
// (PATH's directories inside the root, then the usual places) and run inside it with chroot(1),
// so it reads the node's files, absolute imports and shared libraries exactly as on the node
// (docs/install.md, "Checked with the runtime's own reading").
import type { SpawnSyncReturns } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { EnvhookError, errnoReason, oneLine } from '../errors.ts';

/** A line every envhook front carries (hooks/envhook-runtime). */
export const FRONT_MARKER = 'envhook-runtime-front:';

/** Where a node keeps its programs when PATH does not say (a root's PATH is not this process's). */
export const USUAL_DIRS = ['/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin'];

export interface RuntimeBinary {
  /** The path as the node sees it (inside `root`). */
  path: string;
  /** The node it belongs to: `/`, or a root it is run inside with chroot. */
  root: string;
  /** The flag that named it (`--containerd`, `--crio`): every line about it names the flag. */
  flag?: string;
}

/** A binary a flag named that is not the program (or does not run): which flag, what it is, and what to do. */
export class NamedBinaryError extends EnvhookError {
  readonly fault: string;
  readonly todo: string;
  constructor(fault: string, todo: string) {
    super(`${fault}: ${todo}`);
    this.fault = fault;
    this.todo = todo;
  }
}

export interface LookupOptions {
  /** The node's root (default /). */
  root?: string | undefined;
  /** The PATH whose directories are searched (under the root); default this process's. */
  envPath?: string | undefined;
  /** Absolute directories searched before PATH (where a program started with no PATH finds it). */
  first?: readonly string[] | undefined;
  /** Also the usual directories after PATH (install, status); the shim searches PATH only. */
  usual?: boolean | undefined;
  /** PATH's absolute entries only (always so under another root). */
  absoluteOnly?: boolean | undefined;
}

export interface FindOptions extends LookupOptions {
  /** A front to skip besides every file carrying the marker (the front that started us). */
  front?: string | undefined;
}

/**
 * `name` as a shell of the node would find it: the first executable regular file of that name in
 * `first`, PATH's directories, then the usual ones; its path as the node sees it (an empty PATH
 * entry: the working directory), or undefined. Any program: a runtime is findRuntimeBinary's.
 */
export function findExecutable(name: string, opts: LookupOptions = {}): string | undefined {
  return lookUp(name, opts, isExecutableFile);
}

/** `name` as a shell of the node would find it, fronts skipped; undefined when there is none. */
export function findRuntimeBinary(name: string, opts: FindOptions = {}): RuntimeBinary | undefined {
  const root = path.resolve(opts.root ?? '/');
  const front = opts.front ? realpathOr(opts.front) : undefined;
  const file = lookUp(name, opts, (real) => isExecutableFile(real) && !isFront(real, front));
  return file === undefined ? undefined : { path: file, root };
}

/** The one PATH walk: the first `dir/name` whose file (under the root) `accept`s. */
function lookUp(name: string, opts: LookupOptions, accept: (real: string) => boolean): string | undefined {
  const root = path.resolve(opts.root ?? '/');
  // under another root a relative PATH entry means nothing (the node's working directory is not ours)
  const absoluteOnly = opts.absoluteOnly || root !== '/';
  const pathDirs = (opts.envPath ?? process.env.PATH ?? '').split(':').filter((d) => !absoluteOnly || path.posix.isAbsolute(d));
  for (const dir of [...(opts.first ?? []), ...pathDirs, ...(opts.usual ? USUAL_DIRS : [])]) {
    const file = path.join(dir || '.', name);
    if (accept(root === '/' ? file : path.join(root, file))) return file;
  }
  return undefined;
}

/** What keeps a file of this machine from being a real runtime to exec. */
export type RuntimeFault = 'missing' | 'not executable' | 'front';

/** Why `file` (a path of this machine) is no runtime to exec, or undefined; `front`: the front that started us. */
export function runtimeFault(file: string, front?: string): RuntimeFault | undefined {
  if (!isExecutableFile(file)) return fs.existsSync(file) ? 'not executable' : 'missing';
  return isFront(file, front ? realpathOr(front) : undefined) ? 'front' : undefined;
}

/** `front`: a real path (realpathOr). */
function isFront(file: string, front: string | undefined): boolean {
  return (front !== undefined && realpathOr(file) === front) || carriesMarker(file);
}

/**
 * The runtime's own binary to ask (containerd, crio): `explicit` (--containerd, --crio: a binary
 * of this machine, run here), else the node's under `root` (run inside it); undefined when there
 * is none to run (missingBinary says why).
 */
export function findNodeBinary(name: string, explicit: string | undefined, root: string): RuntimeBinary | undefined {
  const bin = explicit ? { path: path.resolve(explicit), root: '/', flag: `--${name}` } : findRuntimeBinary(name, { root, usual: true });
  return bin && !cannotRun(bin) ? bin : undefined;
}

/** Why findNodeBinary found no `name` to run under `root`. */
export function missingBinary(name: string, root: string): string {
  const r = path.resolve(root);
  const bin = findRuntimeBinary(name, { root: r, usual: true });
  if (bin) return cannotRun(bin) ?? `${name} found`;
  // not the root's path: an installer in a pod (--root /host) prints what one on the host prints
  return `no ${name}${r === '/' ? '' : ' under --root'} on PATH or in ${USUAL_DIRS.join(', ')}`;
}

/** A path of the node as `bin` must be given it: as is inside its root, else under `nodeRoot`. */
export function pathFor(bin: RuntimeBinary, nodeRoot: string, nodePath: string): string {
  return bin.root === path.resolve(nodeRoot) ? nodePath : path.join(nodeRoot, nodePath);
}

export interface RunOptions {
  /** The working directory when run on this machine (inside a root: its /, as under systemd). */
  cwd?: string | undefined;
  timeout?: number | undefined;
  maxBuffer?: number | undefined;
}

/** Runs `bin args`: directly for the root /, else `chroot ROOT PATH args` (chroot from this machine). */
export function runRuntimeBinary(bin: RuntimeBinary, args: string[], opts: RunOptions = {}): SpawnSyncReturns<string> {
  // Loaded here, not at the top: the shim's create imports this module, and node:child_process
  // (with net and the stream stack) would add to every container start (test/build.test.ts).
  const { spawnSync } = process.getBuiltinModule('node:child_process');
  const o = { encoding: 'utf8' as const, timeout: opts.timeout ?? 60_000, maxBuffer: opts.maxBuffer ?? 16 << 20 };
  if (bin.root === '/') return spawnSync(bin.path, args, { ...o, cwd: opts.cwd ?? '/' });
  const chroot = findExecutable('chroot', { usual: true });
  if (!chroot) return notRun(new Error('no chroot'));
  // chroot(2) is root's: as another user chroot(1) would exit 125, which says nothing of why
  if (process.geteuid?.() !== 0) return notRun(Object.assign(new Error('chroot needs root'), { code: 'EPERM', syscall: 'chroot' }));
  return spawnSync(chroot, [bin.root, bin.path, ...args], { ...o, cwd: '/' });
}

function notRun(error: Error): SpawnSyncReturns<string> {
  return { pid: 0, output: [], stdout: '', stderr: '', status: null, signal: null, error };
}

/** Why `bin` cannot be run here (inside a root without chroot on this machine), or undefined. */
function cannotRun(bin: RuntimeBinary): string | undefined {
  if (bin.root === '/' || findExecutable('chroot', { usual: true })) return undefined;
  return `no chroot on this machine's PATH to run ${bin.path} inside --root`;
}

/** A runtime's binary that failed to read its configuration (config dump, crio config): its files, not envhook's install, are to fix. */
export class RuntimeReadFailed extends EnvhookError {}

/**
 * Why a run of a runtime's binary failed, in its own words: its last line on stderr (a Go
 * program's logrus line: its `msg` alone, unquoted), at most 300 characters; else why it did not
 * run, or its exit status.
 */
export function failureWords(r: SpawnSyncReturns<string>): string {
  if (r.error) return errnoReason(r.error);
  const last = (r.stderr ?? '').trim().split('\n').at(-1) ?? '';
  const quoted = /\bmsg=("(?:[^"\\]|\\.)*")/.exec(last)?.[1];
  let words = last.replace(/^.*\bmsg=/, '');
  if (quoted) {
    try {
      words = JSON.parse(quoted) as string;
    } catch {
      words = quoted.slice(1, -1); // Go's quoting beyond JSON's (\x, \u with other forms): as printed
    }
  }
  return oneLine(words).slice(0, 300) || `exit ${r.status ?? r.signal}`;
}

/** The match of `pattern` in what `bin --version` prints; exiting non-zero or no match is an error naming `what`. */
export function versionMatch(bin: RuntimeBinary, what: string, pattern: RegExp): RegExpExecArray {
  const r = runRuntimeBinary(bin, ['--version'], { timeout: 30_000 });
  const m = pattern.exec(r.stdout ?? '');
  const exit = `exit ${r.status ?? r.signal}`;
  if (bin.flag) {
    // the admin named it: say which flag, what it is, and what to do
    const todo = `name ${what}'s executable with ${bin.flag}, or leave ${bin.flag} out (the node's, under --root)`;
    const named = `${bin.flag} ${bin.path}`;
    if (r.error) throw new NamedBinaryError(`${named}: cannot run it: ${errnoReason(r.error)}`, todo);
    if (r.status !== 0 || !m)
      throw new NamedBinaryError(`${named}: not ${what}: its --version printed ${firstLine(r.stdout)} (${exit})`, todo);
    return m;
  }
  if (r.error) throw new EnvhookError(`cannot run ${bin.path} --version: ${errnoReason(r.error)}`, { cause: r.error });
  if (r.status !== 0 || !m) throw new EnvhookError(`${bin.path} --version did not print a ${what} version (${exit})`);
  return m;
}

/** What a program printed first, quoted and cut short, or `nothing`. */
function firstLine(out: string | null | undefined): string {
  const line = (out ?? '').trim().split('\n')[0]!.trim();
  return line ? JSON.stringify(oneLine(line).slice(0, 60)) : 'nothing';
}

export function isExecutableFile(file: string): boolean {
  try {
    if (!fs.statSync(file).isFile()) return false;
    fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function realpathOr(file: string): string {
  try {
    return fs.realpathSync(file);
  } catch {
    return path.resolve(file);
  }
}

/** Looks at the first 1 KiB only: a front is a short script, a real runtime a large binary. */
function carriesMarker(file: string): boolean {
  let fd: number | undefined;
  try {
    fd = fs.openSync(file, 'r');
    const buf = Buffer.alloc(1024);
    const n = fs.readSync(fd, buf, 0, buf.length, 0);
    return buf.subarray(0, n).includes(FRONT_MARKER);
  } catch {
    return false;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}
