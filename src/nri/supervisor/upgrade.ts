// An upgrade of the pre-installed plugin without a runtime restart (docs/nri-guarantees.md#an-upgrade-of-the-pre-installed-plugin):
// `envhook install` has replaced the executable and the plugin file, and asks the running
// supervisor (the instance lock's `upgrade`, lock.ts) to start that file anew. The runtime starts
// a pre-installed plugin only once, at its own start; started by this supervisor instead, the file
// runs the new envhook nri without a runtime connection, so it dials the runtime's NRI socket as an
// external plugin under the same name and index, and takes over from this one with the hand-over
// every newer instance makes (beside.ts: each container claimed by one of the two, this one
// yields once the new one is listed). The file is the one the runtime ran (its $0, never a path
// the asker names), started with this process's environment minus the runtime's connection.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import type { Logger } from '../../log.ts';
import { SUPERVISOR_OPTION_ENV } from '../process.ts';
import { HANDED_ENV, WORKER_ENV, type WorkerRole } from '../roles.ts';

/**
 * Starts `file` (the plugin file, absolute) as the runtime would, but without a connection: the
 * runtime's name and index passed on, its socket not. Returns why it cannot, or undefined once
 * started (the file itself starts envhook nri in the background and exits; it is reaped here).
 */
export function startPluginFile(file: string, role: WorkerRole, env: NodeJS.ProcessEnv, log: Logger): string | undefined {
  try {
    fs.accessSync(file, fs.constants.X_OK);
  } catch {
    return `the plugin file ${file} is not there or not executable (renamed by the install?)`;
  }
  const childEnv: NodeJS.ProcessEnv = { ...env, NRI_PLUGIN_NAME: role.name, NRI_PLUGIN_IDX: role.index };
  // the file sets NODE_OPTIONS, its marker and ENVHOOK_NRI_HANDED itself, as when the runtime starts it
  for (const k of ['NRI_PLUGIN_SOCKET', HANDED_ENV, WORKER_ENV, 'NODE_OPTIONS', SUPERVISOR_OPTION_ENV]) delete childEnv[k];
  const child = spawn(file, [], { env: childEnv, stdio: 'ignore', detached: true, cwd: '/' });
  child.on('error', (err) => log.error({ err, file }, 'nri: the plugin file could not be started for the upgrade'));
  child.on('exit', (code, signal) => {
    if (code !== 0) log.warn({ file, code, signal }, 'nri: the plugin file started for the upgrade did not exit 0');
  });
  child.unref();
  return undefined;
}
