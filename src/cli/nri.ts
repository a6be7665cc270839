// `envhook nri`: the resident NRI plugin (SPEC §9). Runs in the foreground until SIGTERM or
// SIGINT; reconnects when the runtime restarts. Started by the runtime from its plugin
// directory, it uses the connection in NRI_PLUGIN_SOCKET and ends when that closes.
import v8 from 'node:v8';
import type { Command } from 'commander';
import { addSettingFlags, type SettingOptions } from './options.ts';
import { loadSettings } from '../settings.ts';
import { createLogger, type LogLevel } from '../log.ts';
import { useNativeSha256 } from '../plan/sha256.ts';

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

/**
 * A resident process has no use for V8's optimising tiers: each CreateContainer is a few
 * hundred microseconds of protocol work, and Maglev's and TurboFan's code and feedback grew the
 * daemon from ~53 to ~70 MiB of RSS over 20,000 requests in bench row 6, for ~0.05 ms less per
 * request. Ignition and Sparkplug stay. Set before any request runs; they only stop tier-ups.
 * --optimize-for-size makes V8's heap grow less eagerly: bench row 8 (bundle, 4,000 requests)
 * 62.5 → 65.0 MiB VmRSS became 60.0 → 63.3 as a command-line flag; set here, at start, 62.3 →
 * 64.5 → 63.1 over 10,000, at the same own p50 (+1.23 against +1.25 ms).
 */
export function limitJitTiers(): void {
  v8.setFlagsFromString('--no-opt');
  v8.setFlagsFromString('--no-maglev');
  v8.setFlagsFromString('--optimize-for-size');
}

export async function runNri(opts: NriOptions, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  limitJitTiers();
  useNativeSha256();
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
  // A pre-installed plugin is named by the runtime (NN-name of its file), as NRI's stub does.
  const name = (fd !== undefined && env.NRI_PLUGIN_NAME) || PLUGIN_NAME;
  const index = (fd !== undefined && env.NRI_PLUGIN_IDX) || settings.nriIndex;
  log.info({ cmd: 'nri', socket: fd === undefined ? settings.nriSocket : undefined, fd, plugin: `${index}-${name}` }, 'nri start');
  // Owners survive the kubelet's rewrites: the watcher lives as long as the process, across sessions.
  const pods = createPodWatcher({ kubeletRoot: settings.kubeletRoot, log });
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
