// How V8 runs the resident NRI plugin (bench row 8 measures both choices below). A
// per-container command runs for milliseconds and never leaves the interpreter; the daemon
// runs for months and answers every CreateContainer of the node.
import v8 from 'node:v8';

/**
 * Maglev on, TurboFan off, a heap that grows less eagerly. Maglev halves the pipeline's time of
 * each typical CreateContainer against the interpreter; TurboFan gains nothing more there, and
 * its code and compile memory grow the daemon (bench row 8 measures both). Set before any
 * request runs: the flags only change later tier-ups.
 */
export function daemonJitTiers(): void {
  v8.setFlagsFromString('--no-opt');
  v8.setFlagsFromString('--optimize-for-size');
}

/**
 * The Node option the daemon runs with: one V8 platform worker thread. Each worker thread that
 * compiles (Maglev, Sparkplug) or helps the GC gets a malloc arena of its own; with Node's
 * default of 4 the daemon held ~4 MiB more RSS (row 8: 67.5 against 63.3 MiB at the start of
 * the timed requests). The plugin wrapper `envhook install` writes sets it in NODE_OPTIONS.
 */
export const DAEMON_NODE_OPTION = '--v8-pool-size=1';

export interface ProcessFacts {
  execPath: string;
  execArgv: readonly string[];
  argv: readonly string[];
  env: NodeJS.ProcessEnv;
  /** The single executable: its Node options come only from NODE_OPTIONS. */
  sea: boolean;
}

/** True when NODE_OPTIONS sets the pool size (ours, or the admin's own choice: kept). */
export const hasPoolSize = (env: NodeJS.ProcessEnv): boolean =>
  (env.NODE_OPTIONS ?? '').split(/\s+/).some((o) => o.startsWith('--v8-pool-size'));

/**
 * The execve that gives the daemon DAEMON_NODE_OPTION in NODE_OPTIONS (which the single
 * executable reads too), or undefined when NODE_OPTIONS already sets a pool size. argv stays as
 * given: the bundle's Node flags, script and arguments; the single executable's arguments after
 * its path. The new process has the option, so this happens once.
 */
export function reexecArgs(p: ProcessFacts): { file: string; args: string[]; env: NodeJS.ProcessEnv } | undefined {
  if (hasPoolSize(p.env)) return undefined;
  const nodeOptions = p.env.NODE_OPTIONS?.trim();
  const args = p.sea ? [p.execPath, ...p.argv.slice(2)] : [p.execPath, ...p.execArgv, ...p.argv.slice(1)];
  return {
    file: p.execPath,
    args,
    env: { ...p.env, NODE_OPTIONS: nodeOptions ? `${nodeOptions} ${DAEMON_NODE_OPTION}` : DAEMON_NODE_OPTION },
  };
}

/**
 * Replaces this process (same PID) by the daemon's shape, once. Not with an inherited
 * connection (NRI_PLUGIN_SOCKET): Node marks inherited descriptors close-on-exec at start, so
 * the connection would not survive; the installed wrapper sets the option before Node starts.
 * Returns when nothing is done; `onSkip` hears why when the option could not be had.
 */
export function reexecAsDaemon(inheritedFd: number | undefined, onSkip: (why: string, err?: unknown) => void): void {
  const sea = process.getBuiltinModule('node:sea')?.isSea() ?? false;
  const next = reexecArgs({ execPath: process.execPath, execArgv: process.execArgv, argv: process.argv, env: process.env, sea });
  if (next === undefined) return;
  if (inheritedFd !== undefined) return onSkip(`NRI_PLUGIN_SOCKET is set and NODE_OPTIONS has no ${DAEMON_NODE_OPTION}`);
  // Node before 23.11 has no execve.
  if (process.execve === undefined) return onSkip('process.execve is not available in this Node');
  try {
    process.execve(next.file, next.args, next.env);
  } catch (err) {
    onSkip('execve failed', err);
  }
}
