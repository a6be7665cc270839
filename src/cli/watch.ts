// `envhook watch`: on nodes that run the shim (no NRI daemon), applies volume owners again after
// every atomic rewrite of the kubelet, from the records the shim writes at create in the run
// directory (src/watch/). Runs in the foreground until SIGTERM or SIGINT; logs to the log file
// only (names, paths, counts; never a file's content).
import type { Command } from 'commander';
import { createLogger } from '../log.ts';
import { DEFAULT_RUN_DIR } from '../watch/run-dir.ts';
import { addSettingFlags, settingsFrom, type SettingOptions } from './options.ts';

export function registerWatch(program: Command): void {
  const cmd = program
    .command('watch')
    .description("keep volume owners (envhook.io/volumeOwners) across the kubelet's rewrites, for the pods the shim recorded")
    .option('--run-dir <dir>', 'where the shim records owners (default /run/envhook)');
  addSettingFlags(cmd).action(async (opts: SettingOptions) => {
    const settings = settingsFrom(opts);
    const log = createLogger(settings.logFile, settings.logLevel);
    const { startWatchDaemon } = await import('../watch/watch-daemon.ts');
    const daemon = startWatchDaemon({ runDir: settings.runDir ?? DEFAULT_RUN_DIR, kubeletRoot: settings.kubeletRoot, log });
    const signal = await new Promise<string>((resolve) => {
      const on = (sig: string) => () => resolve(sig);
      const handlers = { SIGTERM: on('SIGTERM'), SIGINT: on('SIGINT') };
      for (const [sig, h] of Object.entries(handlers)) process.once(sig, h);
    });
    log.info({ signal }, 'signal');
    daemon.stop();
  });
}
