// `envhook watch`: on nodes that run the shim (no NRI daemon), applies volume owners again after
// every atomic rewrite of the kubelet, from the records the shim writes at create in the run
// directory (src/watch/). Runs in the foreground until SIGTERM or SIGINT; logs JSON lines to
// stderr, as `envhook nri` does (the journal under systemd, `kubectl logs` in a DaemonSet), or to
// the log file (names, paths, counts; never a file's content). With a FIFO priority (flag, environment
// or config file, as `envhook nri`'s) the whole process runs under SCHED_FIFO, so it owns a
// rewritten file before a reader can find it (docs/ownership.md).
import fs from 'node:fs';
import type { Command } from 'commander';
import { EnvhookError, errnoReason } from '../errors.ts';
import { createLogger } from '../log.ts';
import { fifoNumber } from '../settings.ts';
import { DEFAULT_RUN_DIR, ensureRunDir } from '../watch/run-dir.ts';
import { checkRunDirInMemory } from '../watch/run-dir-memory.ts';
import { addSettingFlags, settingsFrom, type SettingOptions } from './options.ts';

interface WatchOptions extends SettingOptions {
  fifoPriority?: string;
}

export function registerWatch(program: Command): void {
  const cmd = program
    .command('watch')
    .description("keep volume owners (envhook.io/volumeOwners) across the kubelet's rewrites, for the pods the shim recorded")
    .option('--run-dir <dir>', 'where the shim records owners (default /run/envhook)')
    .option(
      '--fifo-priority <1-99>',
      'run under SCHED_FIFO at this priority, so that rewritten volume files are owned before a reader can find them (default: ordinary)',
    );
  addSettingFlags(cmd, { daemon: true }).action(async (opts: WatchOptions) => {
    // Handlers first: a SIGTERM during start-up (right after the first log line, say) ends the
    // daemon once it is up, by its own stop, not by the signal's default action.
    const stopSignal = untilStopSignal();
    const settings = settingsFrom(opts, {
      fifoPriority: opts.fifoPriority === undefined ? undefined : fifoNumber(opts.fifoPriority, '--fifo-priority'),
    });
    checkKubeletRoot(settings.kubeletRoot);
    const log = createLogger(settings.logFile, settings.logLevel, { stderr: true, fileGroup: settings.fileGroup });
    if (settings.fifoPriority !== undefined) {
      const { setFifo } = await import('../nri/realtime.ts');
      const why = setFifo(process.pid, settings.fifoPriority);
      if (why === undefined) log.debug({ fifoPriority: settings.fifoPriority }, 'watch: under SCHED_FIFO');
      else log.warn({ fifoPriority: settings.fifoPriority }, `watch: left at ordinary priority: ${why}`);
    }
    const runDir = settings.runDir ?? DEFAULT_RUN_DIR;
    // Refused on a disk before anything is made; the warning once the run directory passed its own checks.
    const onDisk = checkRunDirInMemory(runDir, settings.runDirOnDisk ?? 'warn', true);
    ensureRunDir(runDir);
    if (onDisk !== undefined) log.warn({ runDir }, onDisk);
    const { startWatchDaemon } = await import('../watch/watch-daemon.ts');
    const { inlineCopier } = await import('../mirror/copier.ts');
    const { budgetsOf } = await import('../mirror/budget.ts');
    // The rewrites it follows are held to the budgets of the settings (docs/ownership.md#budgets).
    const registry = { copier: inlineCopier(budgetsOf(settings)) };
    const daemon = startWatchDaemon({ runDir, kubeletRoot: settings.kubeletRoot, log, registry });
    log.info({ signal: await stopSignal }, 'signal');
    daemon.stop();
  });
}

function untilStopSignal(): Promise<string> {
  return new Promise<string>((resolve) => {
    for (const sig of ['SIGTERM', 'SIGINT']) process.once(sig, () => resolve(sig));
  });
}

/** The records name pods under the kubelet root: a root that is not there would watch nothing, silently. */
function checkKubeletRoot(dir: string): void {
  let st: fs.Stats | undefined;
  try {
    st = fs.statSync(dir, { throwIfNoEntry: false });
  } catch (cause) {
    throw new EnvhookError(`kubelet root ${dir}: ${errnoReason(cause)}`, { cause });
  }
  const fix = "set --kubelet-root (ENVHOOK_KUBELET_ROOT, kubeletRoot) to the kubelet's --root-dir";
  if (st === undefined) throw new EnvhookError(`kubelet root ${dir} does not exist: ${fix}`);
  if (!st.isDirectory()) throw new EnvhookError(`kubelet root ${dir} is not a directory: ${fix}`);
}
