// Which process of `envhook nri` this is, and what it was handed: the supervisor starts its
// worker as the same executable with ENVHOOK_NRI_WORKER (internal: its role, JSON); a process
// the runtime started (pre-installed) gets the runtime's connection as NRI_PLUGIN_SOCKET; the
// supervisor that holds it has ENVHOOK_NRI_HANDED (internal too), set by the plugin file install
// writes, which starts it in the background, or by a runtime-started envhook that hands over.
// The plugin file also names itself (ENVHOOK_NRI_PLUGIN_FILE, its $0): a supervisor started from
// it can start the file anew for an upgrade without a runtime restart (supervisor/upgrade.ts), and
// the instance so started, with no runtime connection, stands for the pre-installed plugin.
import { EnvhookError } from '../errors.ts';

const PLUGIN_NAME = 'envhook';
export const WORKER_ENV = 'ENVHOOK_NRI_WORKER';
/** Internal: set on the supervisor the runtime's connection is handed to (by the plugin file, or by a runtime-started envhook). */
export const HANDED_ENV = 'ENVHOOK_NRI_HANDED';
/** Internal: set by the plugin file install writes to its own path ($0). */
export const PLUGIN_FILE_ENV = 'ENVHOOK_NRI_PLUGIN_FILE';
/** What the runtime sets on a plugin it starts (NRI's stub reads the same). */
export const RUNTIME_FD_ENV = ['NRI_PLUGIN_SOCKET', 'NRI_PLUGIN_NAME', 'NRI_PLUGIN_IDX'];

/** What the supervisor tells its worker (ENVHOOK_NRI_WORKER, JSON). */
export interface WorkerRole {
  name: string;
  index: string;
  /** The runtime started envhook (pre-installed), or its plugin file did (an upgrade): end when its socket is gone. */
  preinstalled: boolean;
  /** Started during a hand-over: another envhook nri serves beside it, containers are claimed. */
  sharing?: boolean;
}

export function parseRole(text: string): WorkerRole {
  try {
    const r = JSON.parse(text) as WorkerRole;
    if (
      typeof r.name === 'string' &&
      /^[0-9]{2}$/.test(r.index) &&
      typeof r.preinstalled === 'boolean' &&
      (r.sharing ?? false) === !!r.sharing
    )
      return r;
  } catch {
    // the message below
  }
  throw notForAdmins();
}

export const notForAdmins = (): EnvhookError => new EnvhookError(`${WORKER_ENV} is internal to envhook nri (its worker's role): unset it`);

/** The fd in NRI_PLUGIN_SOCKET, or undefined when it is not set. */
export function inheritedFd(env: NodeJS.ProcessEnv): number | undefined {
  const v = env.NRI_PLUGIN_SOCKET;
  if (v === undefined || v === '') return undefined;
  if (!/^[0-9]{1,9}$/.test(v)) throw new EnvhookError('NRI_PLUGIN_SOCKET is not a file descriptor number');
  return Number(v);
}

/** True when the plugin file started this supervisor without a runtime connection (an upgrade: supervisor/upgrade.ts). */
export function startedFromPluginFile(fd: number | undefined, env: NodeJS.ProcessEnv): boolean {
  return fd === undefined && env[HANDED_ENV] !== undefined && pluginFileOf(env) !== undefined;
}

/** The plugin file this supervisor was started from (ENVHOOK_NRI_PLUGIN_FILE, absolute), or undefined. */
export function pluginFileOf(env: NodeJS.ProcessEnv): string | undefined {
  const file = env[PLUGIN_FILE_ENV];
  return file !== undefined && file.startsWith('/') && !file.includes('\n') ? file : undefined;
}

/**
 * The worker's role: a pre-installed plugin is named by the runtime (NN-name of its file), as
 * NRI's stub does; so is the instance its plugin file started for an upgrade (the runtime's
 * NRI_PLUGIN_NAME and NRI_PLUGIN_IDX passed on), which registers under the same name and index.
 */
export function roleOf(fd: number | undefined, env: NodeJS.ProcessEnv, nriIndex: string): WorkerRole {
  const runtimes = fd !== undefined || startedFromPluginFile(fd, env);
  const name = (runtimes && env.NRI_PLUGIN_NAME) || PLUGIN_NAME;
  const index = (runtimes && env.NRI_PLUGIN_IDX) || nriIndex;
  return { name, index, preinstalled: runtimes };
}
