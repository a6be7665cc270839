// Setting flags shared by the commands that run the pipeline (docs/design.md#settings).
import type { Command } from 'commander';
import { BUDGET_FLAGS, budgetNumber, loadSettings, type RunDirOnDisk, type SettingFlags } from '../settings.ts';
import type { LogLevel } from '../log.ts';
import { DEFAULT_PREFIX } from '../install/layout.ts';

export interface SettingOptions {
  kubeletRoot?: string;
  runtime?: string;
  logFile?: string;
  logLevel?: string;
  runDir?: string;
  runDirOnDisk?: string;
  fileGroup?: string;
  podCopyBytes?: string;
  podCopyFiles?: string;
  podCopyVolumes?: string;
  nodeCopyBytes?: string;
}

/** `daemon`: without a log file the command logs to stderr (`nri`, `watch`), and writes owned copies to the run directory. */
export function addSettingFlags(cmd: Command, { runtime = false, daemon = false } = {}): Command {
  if (daemon)
    cmd
      .option(
        '--run-dir-on-disk <refuse|warn>',
        'a run directory that is not tmpfs (owned copies of secrets on disk): refuse to start, or warn on stderr and go on (default warn)',
      )
      .option(
        `${BUDGET_FLAGS.podCopyBytes} <bytes>`,
        "owned copies: bytes of file content one pod's copies may hold (default 33554432: 32 MiB)",
      )
      .option(`${BUDGET_FLAGS.podCopyFiles} <n>`, "owned copies: files one pod's copies may hold (default 8192)")
      .option(`${BUDGET_FLAGS.podCopyVolumes} <n>`, 'owned copies: volumes one pod may have copies of (default 32)')
      .option(
        `${BUDGET_FLAGS.nodeCopyBytes} <bytes>`,
        "owned copies: bytes of file content all the node's copies may hold (default: a quarter of the run directory's file system, at most 256 MiB)",
      );
  cmd
    .option('--kubelet-root <dir>', 'kubelet root directory (default /var/lib/kubelet)')
    .option('--log-file <file>', daemon ? 'structured JSON log file (default: JSON lines on stderr)' : 'structured JSON log file')
    .option('--log-level <level>', 'log level: fatal, error, warn, info, debug, trace, silent')
    .option('--file-group <group>', "the log file (and envhook nri's status file) 0640 with this group, a name or GID (default: 0600)");
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
      runDirOnDisk: opts.runDirOnDisk as RunDirOnDisk | undefined,
      fileGroup: opts.fileGroup,
      ...budgetFlags(opts),
      ...extra,
    },
    env,
  );
}

/** The budget flags given, as numbers (settings.ts checks them further). */
function budgetFlags(opts: SettingOptions): SettingFlags {
  const out: SettingFlags = {};
  for (const key of Object.keys(BUDGET_FLAGS) as (keyof typeof BUDGET_FLAGS)[]) {
    const text = opts[key];
    if (text !== undefined) out[key] = budgetNumber(text, BUDGET_FLAGS[key]);
  }
  return out;
}

/** The node `envhook status` and `envhook doctor` look at (src/doctor/node.ts): its root, envhook's prefix, the runtimes' binaries, the run directory. */
export function addNodeFlags(cmd: Command): Command {
  return cmd
    .option(
      '--root <dir>',
      "the node's root: the install state, the settings file, the status file, /proc and the runtime's binaries are taken under it",
      '/',
    )
    .option('--prefix <dir>', "envhook's own directory on the node (install --prefix)", DEFAULT_PREFIX)
    .option(
      '--containerd <path>',
      "the containerd to ask for its reading (default: the one install was named, else the node's, under --root)",
    )
    .option('--crio <path>', "the crio to ask for its reading (default: the one install was named, else the node's, under --root)")
    .option('--run-dir <dir>', 'where envhook nri writes nri-status.json (default /run/envhook)');
}
