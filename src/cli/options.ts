// Setting flags shared by the commands that run the pipeline (docs/design.md#settings).
import type { Command } from 'commander';
import { loadSettings, type SettingFlags } from '../settings.ts';
import type { LogLevel } from '../log.ts';

export interface SettingOptions {
  kubeletRoot?: string;
  runtime?: string;
  logFile?: string;
  logLevel?: string;
  runDir?: string;
}

/** `daemon`: without a log file the command logs to stderr (`nri`, `watch`). */
export function addSettingFlags(cmd: Command, { runtime = false, daemon = false } = {}): Command {
  cmd
    .option('--kubelet-root <dir>', 'kubelet root directory (default /var/lib/kubelet)')
    .option('--log-file <file>', daemon ? 'structured JSON log file (default: JSON lines on stderr)' : 'structured JSON log file')
    .option('--log-level <level>', 'log level: fatal, error, warn, info, debug, trace, silent');
  if (runtime) cmd.option('--runtime <path>', 'the real OCI runtime (default runc on PATH)');
  return cmd;
}

/** The settings in force: the shared flags, a command's own settings (`extra`), then environment, config file, defaults. */
export function settingsFrom(opts: SettingOptions, extra: SettingFlags = {}, env: NodeJS.ProcessEnv = process.env) {
  return loadSettings(
    {
      kubeletRoot: opts.kubeletRoot,
      runtime: opts.runtime,
      logFile: opts.logFile,
      logLevel: opts.logLevel as LogLevel | undefined,
      runDir: opts.runDir,
      ...extra,
    },
    env,
  );
}
