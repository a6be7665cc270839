// The supervisor's processes: its worker (this executable again, with the IPC channel, the
// daemon's V8 threads and its role), and, when the runtime started envhook, the supervisor the
// runtime-started process hands the runtime's connection to.
import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import fs from 'node:fs';
import type { Logger } from '../../log.ts';
import { SUPERVISOR_OPTION_ENV, workerNodeOptions } from '../process.ts';
import { setFifo } from '../realtime.ts';
import { HANDED_ENV, RUNTIME_FD_ENV, WORKER_ENV, type WorkerRole } from '../roles.ts';

/** This command's arguments for another process of the same executable (the single executable takes no script). */
function selfArgs(): string[] {
  const sea = process.getBuiltinModule('node:sea')?.isSea() ?? false;
  return sea ? process.argv.slice(2) : [...process.execArgv, ...process.argv.slice(1)];
}

/** The worker: this executable again, with the IPC channel, the daemon's V8 threads (not the supervisor's --jitless) and its role. */
function spawnWorker(role: WorkerRole, fd: number | undefined, env: NodeJS.ProcessEnv): ChildProcess {
  const args = selfArgs();
  // The daemon's V8 threads; not the supervisor's own option (process.ts).
  const childEnv: NodeJS.ProcessEnv = { ...env, [WORKER_ENV]: JSON.stringify(role), NODE_OPTIONS: workerNodeOptions(env) };
  for (const k of [...RUNTIME_FD_ENV, HANDED_ENV, SUPERVISOR_OPTION_ENV]) delete childEnv[k];
  let stdio: StdioOptions = ['ignore', 'ignore', 'inherit', 'ipc'];
  if (fd !== undefined) {
    Object.assign(childEnv, { NRI_PLUGIN_SOCKET: '3', NRI_PLUGIN_NAME: role.name, NRI_PLUGIN_IDX: role.index });
    stdio = ['ignore', 'ignore', 'inherit', fd, 'ipc'];
  }
  return spawn(process.execPath, args, { env: childEnv, stdio });
}

export interface WorkerSpawnOptions {
  role: WorkerRole;
  /** The runtime's connection (pre-installed): the first worker's only. */
  fd: number | undefined;
  env: NodeJS.ProcessEnv;
  fifoPriority: number | undefined;
  log: Logger;
}

/**
 * What the supervisor calls to start each worker; `wantFd`: the one given the runtime's
 * connection, if any; `sharing`: it starts during a hand-over (claims containers).
 */
export function workerSpawner({
  role,
  fd,
  env,
  fifoPriority,
  log,
}: WorkerSpawnOptions): (wantFd: boolean, sharing?: boolean) => ChildProcess {
  const fifo = fifoSetter(log);
  let first = true;
  return (wantFd, sharing = false) => {
    const child = spawnWorker(sharing ? { ...role, sharing } : role, wantFd && first ? fd : undefined, env);
    // Only the worker holds the runtime's connection: when it dies, the runtime sees it close.
    if (first && fd !== undefined) fs.closeSync(fd);
    first = false;
    if (fifoPriority !== undefined && child.pid !== undefined) fifo(child.pid, fifoPriority);
    return child;
  };
}

/** Starts this command again as the supervisor, with the runtime's connection as its fd 3 (and NRI_PLUGIN_*). */
export function handOver(fd: number, env: NodeJS.ProcessEnv, log: Logger): void {
  const child = spawn(process.execPath, selfArgs(), {
    env: { ...env, NRI_PLUGIN_SOCKET: '3', [HANDED_ENV]: '1' },
    stdio: ['ignore', 'ignore', 'inherit', fd],
  });
  child.on('error', (err) => log.error({ err }, 'nri: the supervisor could not be started'));
  child.unref();
  fs.closeSync(fd);
  log.debug({ supervisorPid: child.pid }, "nri: the runtime's connection handed to the supervisor");
}

/** Puts a worker under SCHED_FIFO; the first failure is a warning, later ones are not repeated. */
function fifoSetter(log: Logger): (pid: number, priority: number) => void {
  let warned = false;
  return (pid, priority) => {
    const why = setFifo(pid, priority);
    if (why === undefined) return log.debug({ workerPid: pid, fifoPriority: priority }, 'nri: worker under SCHED_FIFO');
    if (!warned) log.warn({ workerPid: pid, fifoPriority: priority }, `nri: worker left at ordinary priority: ${why}`);
    warned = true;
  };
}
