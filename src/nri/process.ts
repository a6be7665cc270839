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

/**
 * The supervisor's own V8 option, after DAEMON_NODE_OPTION when it re-executes itself: no JIT at
 * all. It answers no request: it reads a heartbeat five times a second and writes the status
 * file once a second, and the interpreter does that at a cost no one sees; the JIT's code, its
 * compile memory and the single executable's code cache (made for the front, rejected under
 * other flags) cost it resident memory that grew for the first hour (bench/soak.md).
 * Taken out of NODE_OPTIONS again for the worker, which needs Maglev (spawn.ts).
 */
export const SUPERVISOR_NODE_OPTION = '--jitless';
/** Set by the re-execution to what it added for the supervisor alone, so that the worker's NODE_OPTIONS loses exactly that. */
export const SUPERVISOR_OPTION_ENV = 'ENVHOOK_NRI_SUPERVISOR_OPTION';

/** True when NODE_OPTIONS sets the pool size (ours, or the admin's own choice: kept). */
export const hasPoolSize = (env: NodeJS.ProcessEnv): boolean =>
  (env.NODE_OPTIONS ?? '').split(/\s+/).some((o) => o.startsWith('--v8-pool-size'));

/**
 * The execve that gives the daemon DAEMON_NODE_OPTION and the supervisor's own option in
 * NODE_OPTIONS (which the single executable reads too), or undefined when NODE_OPTIONS already sets a pool size. argv stays as
 * given: the bundle's Node flags, script and arguments; the single executable's arguments after
 * its path. The new process has the option, so this happens once.
 */
export function reexecArgs(p: ProcessFacts): { file: string; args: string[]; env: NodeJS.ProcessEnv } | undefined {
  if (hasPoolSize(p.env)) return undefined;
  const nodeOptions = p.env.NODE_OPTIONS?.trim();
  const args = p.sea ? [p.execPath, ...p.argv.slice(2)] : [p.execPath, ...p.execArgv, ...p.argv.slice(1)];
  const ours = `${DAEMON_NODE_OPTION} ${SUPERVISOR_NODE_OPTION}`;
  return {
    file: p.execPath,
    args,
    env: { ...p.env, NODE_OPTIONS: nodeOptions ? `${nodeOptions} ${ours}` : ours, [SUPERVISOR_OPTION_ENV]: SUPERVISOR_NODE_OPTION },
  };
}

/**
 * The worker's NODE_OPTIONS from the supervisor's environment: without what the re-execution
 * added for the supervisor alone (SUPERVISOR_OPTION_ENV says what, as the last of them), with
 * DAEMON_NODE_OPTION unless a pool size is set. The admin's own options are kept.
 */
export function workerNodeOptions(env: NodeJS.ProcessEnv): string {
  let options = env.NODE_OPTIONS?.trim() ?? '';
  const own = env[SUPERVISOR_OPTION_ENV];
  if (own && (options === own || options.endsWith(` ${own}`))) options = options.slice(0, -own.length).trim();
  if (hasPoolSize({ NODE_OPTIONS: options })) return options;
  return options ? `${options} ${DAEMON_NODE_OPTION}` : DAEMON_NODE_OPTION;
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
