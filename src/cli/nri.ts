// `envhook nri`: the resident NRI plugin (SPEC §9). Runs in the foreground until SIGTERM or
// SIGINT; reconnects when the runtime restarts. Started by the runtime from its plugin
// directory, it uses the connection in NRI_PLUGIN_SOCKET and ends when that closes.
import type { Command } from 'commander';
import { addSettingFlags, type SettingOptions } from './options.ts';
import { loadSettings } from '../settings.ts';
import { createLogger, type LogLevel } from '../log.ts';
import { DAEMON_NODE_OPTION, daemonJitTiers, reexecAsDaemon } from '../nri/process.ts';

interface NriOptions extends SettingOptions {
  socket?: string;
  index?: string;
}

export const PLUGIN_NAME = 'envhook';

export function registerNri(program: Command): void {
  const cmd = program
    .command('nri')
    .description('run the NRI plugin (containerd ≥ 1.7, CRI-O ≥ 1.26) in the foreground')
    .option('--socket <path>', "the runtime's NRI socket (default /var/run/nri/nri.sock)")
    .option('--index <NN>', 'plugin index, two digits: the order among NRI plugins (default 50)');
  addSettingFlags(cmd).action((opts: NriOptions) => runNri(opts));
}

export async function runNri(opts: NriOptions, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  daemonJitTiers();
  // Loaded here, not at registration: `envhook --help` registers every command.
  const { inheritedFd, startDaemon } = await import('../nri/daemon.ts');
  const { createNriHandler } = await import('../nri/handler.ts');
  const { createPodWatcher } = await import('../nri/pod-watch.ts');
  const settings = loadSettings({
    kubeletRoot: opts.kubeletRoot,
    logFile: opts.logFile,
    logLevel: opts.logLevel as LogLevel | undefined,
    nriSocket: opts.socket,
    nriIndex: opts.index,
  }, env);
  const fd = inheritedFd(env);
  const log = createLogger(settings.logFile, settings.logLevel);
  reexecAsDaemon(fd, (why, err) => log.warn({ err }, `nri: running with Node's default V8 threads, not ${DAEMON_NODE_OPTION} (${why}): more memory, same behaviour`));
  // A pre-installed plugin is named by the runtime (NN-name of its file), as NRI's stub does.
  const name = (fd !== undefined && env.NRI_PLUGIN_NAME) || PLUGIN_NAME;
  const index = (fd !== undefined && env.NRI_PLUGIN_IDX) || settings.nriIndex;
  log.info({ cmd: 'nri', socket: fd === undefined ? settings.nriSocket : undefined, fd, plugin: `${index}-${name}` }, 'nri start');
  // Owners survive the kubelet's rewrites: the watcher lives as long as the process, across sessions.
  const pods = createPodWatcher({ kubeletRoot: settings.kubeletRoot, log, runDir: settings.runDir });
  pods.restore();
  const daemon = startDaemon({ socketPath: settings.nriSocket, fd, name, index, handler: createNriHandler({ settings, log }), pods, log });
  const stop = (signal: NodeJS.Signals) => {
    log.info({ signal }, 'nri stopping');
    daemon.stop();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  try {
    await daemon.done;
  } finally {
    process.off('SIGTERM', stop);
    process.off('SIGINT', stop);
    pods.close();
  }
  log.info({ cmd: 'nri' }, 'nri stopped');
}
