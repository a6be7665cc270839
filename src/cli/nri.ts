// `envhook nri`: the resident NRI plugin (docs/design.md#nri-mode). This file only reads the
// flags: the command is a supervisor (nri/supervisor/main.ts) that keeps one worker
// (nri/worker/main.ts) registered with the runtime: the same executable, started again with
// ENVHOOK_NRI_WORKER (internal: name, index and how the runtime started envhook). It runs in the
// foreground until SIGTERM or SIGINT, or until a newer instance for the same socket takes over.
import type { Command } from 'commander';
import { addSettingFlags, settingsFrom, type SettingOptions } from './options.ts';
import { fifoNumber } from '../settings.ts';
import { parseRole, WORKER_ENV } from '../nri/roles.ts';

interface NriOptions extends SettingOptions {
  socket?: string;
  index?: string;
  metricsAddress?: string;
  runDir?: string;
  criSocket?: string;
  evictUnapplied?: boolean;
  fifoPriority?: string;
}

export function registerNri(program: Command): void {
  const cmd = program
    .command('nri')
    .description('run the NRI plugin (containerd ≥ 1.7, CRI-O ≥ 1.26) in the foreground')
    .option('--socket <path>', "the runtime's NRI socket (default /var/run/nri/nri.sock)")
    .option('--index <NN>', 'plugin index, two digits: the order among NRI plugins (default 50)')
    .option('--metrics-address <host:port>', 'serve /metrics, /healthz and /readyz there (off by default)')
    .option(
      '--run-dir <dir>',
      "the run directory: status file, records, owned copies; the host's directory at that path, where the runtime mounts the copies from (default /run/envhook)",
    )
    .option(
      '--evict-unapplied',
      'stop every running container created while envhook was not registered, so that the kubelet creates it again (default: only pods annotated envhook.io/evictUnapplied: "true")',
    )
    .option('--cri-socket <path>', "the runtime's CRI socket, for evictions (default: the registered runtime's own)")
    .option(
      '--fifo-priority <1-99>',
      'run the worker under SCHED_FIFO at this priority, so that it owns rewritten volume files before a reader can find them (default: ordinary)',
    );
  addSettingFlags(cmd, { daemon: true }).action((opts: NriOptions) => runNri(opts));
}

function nriSettings(opts: NriOptions, env: NodeJS.ProcessEnv) {
  return settingsFrom(
    opts,
    {
      nriSocket: opts.socket,
      nriIndex: opts.index,
      metricsAddress: opts.metricsAddress,
      criSocket: opts.criSocket,
      evictUnapplied: opts.evictUnapplied,
      fifoPriority: opts.fifoPriority === undefined ? undefined : fifoNumber(opts.fifoPriority, '--fifo-priority'),
    },
    env,
  );
}

/** The worker when the supervisor started this process (ENVHOOK_NRI_WORKER), the supervisor otherwise; each loads only its own code. */
async function runNri(opts: NriOptions, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const role = env[WORKER_ENV];
  if (role !== undefined) {
    const workerRole = parseRole(role);
    return (await import('../nri/worker/main.ts')).runWorker(nriSettings(opts, env), env, workerRole);
  }
  const settings = nriSettings(opts, env);
  return (await import('../nri/supervisor/main.ts')).runSupervisor(settings, env);
}
