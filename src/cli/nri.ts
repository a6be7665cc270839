// `envhook nri`: the resident NRI plugin (docs/design.md#nri-mode). The command is a supervisor (nri/supervisor.ts)
// that keeps one worker registered with the runtime: the same executable, started again with
// ENVHOOK_NRI_WORKER (internal: name, index and how the runtime started envhook). It runs in the
// foreground until SIGTERM or SIGINT, or until a newer instance for the same socket takes over.
import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import fs from 'node:fs';
import type { Command } from 'commander';
import { addSettingFlags, settingsFrom, type SettingOptions } from './options.ts';
import { EnvhookError } from '../errors.ts';
import { fifoNumber } from '../settings.ts';
import { createLogger, type Logger } from '../log.ts';
import { DAEMON_NODE_OPTION, daemonJitTiers, hasPoolSize, reexecAsDaemon } from '../nri/process.ts';
import type { NriObserver } from '../nri/observer.ts';
import type { NriStatus } from '../nri/status-file.ts';
import { checkRunDirUsable, DEFAULT_RUN_DIR } from '../watch/run-dir.ts';

interface NriOptions extends SettingOptions {
  socket?: string;
  index?: string;
  metricsAddress?: string;
  runDir?: string;
  criSocket?: string;
  evictUnapplied?: boolean;
  fifoPriority?: string;
}

/** What the supervisor tells its worker (ENVHOOK_NRI_WORKER, JSON). */
interface WorkerRole {
  name: string;
  index: string;
  /** The runtime started envhook (pre-installed): end when its socket is gone. */
  preinstalled: boolean;
}

export const PLUGIN_NAME = 'envhook';
export const WORKER_ENV = 'ENVHOOK_NRI_WORKER';
/** Internal: set on the supervisor the runtime-started process hands the runtime's connection to. */
export const HANDED_ENV = 'ENVHOOK_NRI_HANDED';
const RUNTIME_FD_ENV = ['NRI_PLUGIN_SOCKET', 'NRI_PLUGIN_NAME', 'NRI_PLUGIN_IDX'];

export function registerNri(program: Command): void {
  const cmd = program
    .command('nri')
    .description('run the NRI plugin (containerd ≥ 1.7, CRI-O ≥ 1.26) in the foreground')
    .option('--socket <path>', "the runtime's NRI socket (default /var/run/nri/nri.sock)")
    .option('--index <NN>', 'plugin index, two digits: the order among NRI plugins (default 50)')
    .option('--metrics-address <host:port>', 'serve /metrics, /healthz and /readyz there (off by default)')
    .option('--run-dir <dir>', 'where the status file goes (default /run/envhook)')
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

export async function runNri(opts: NriOptions, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const role = env[WORKER_ENV];
  if (role !== undefined) return runWorker(opts, env, parseRole(role));
  return runSupervisor(opts, env);
}

async function runSupervisor(opts: NriOptions, env: NodeJS.ProcessEnv): Promise<void> {
  const { inheritedFd } = await import('../nri/nri-daemon.ts');
  const { startSupervisor } = await import('../nri/supervisor.ts');
  const { acquireLock } = await import('../nri/lock.ts');
  const { writeStatus } = await import('../nri/status-file.ts');
  const { DurationHistogram } = await import('../nri/metrics.ts');
  const settings = nriSettings(opts, env);
  const runDir = settings.runDir ?? DEFAULT_RUN_DIR;
  await checkStart(settings, runDir);
  const fd = inheritedFd(env);
  const log = createLogger(settings.logFile, settings.logLevel, { stderr: true });
  // NRI kills the process it started (SIGKILL) once that plugin's connection has closed (its
  // removeClosedPlugins, at the next container event): that process must not be the supervisor,
  // or the first worker's death would take envhook down for good. It hands the connection to a
  // supervisor of its own and exits; the runtime reaps it when it kills it.
  if (fd !== undefined && env[HANDED_ENV] === undefined) return handOver(fd, env, log);
  reexecAsDaemon(fd, (why, err) => log.debug({ err }, `nri: supervisor on Node's default V8 threads (${why})`));
  // A pre-installed plugin is named by the runtime (NN-name of its file), as NRI's stub does.
  const name = (fd !== undefined && env.NRI_PLUGIN_NAME) || PLUGIN_NAME;
  const index = (fd !== undefined && env.NRI_PLUGIN_IDX) || settings.nriIndex;
  const plugin = `${index}-${name}`;

  let supervisor: ReturnType<typeof startSupervisor> | undefined;
  const lock = await acquireLock({
    socketPath: settings.nriSocket,
    onTakeover: (pid) => log.info({ plugin, previous: pid }, 'nri: took over from the envhook nri that was running'),
    onRequest: async (request, pid) => {
      log.info({ plugin, by: pid, request }, request === 'stop' ? 'nri: asked to stop' : 'nri: a newer envhook nri takes over');
      await supervisor?.stop(request === 'stop' ? `stop asked by pid ${pid}` : `taken over by pid ${pid}`);
    },
  });
  const role: WorkerRole = { name, index, preinstalled: fd !== undefined };
  const fifo = await fifoSetter(log);
  const histogram = new DurationHistogram();
  const health = await startHealth(settings.metricsAddress, () => supervisor!.status(), histogram, log, lock);
  // Started: every start-up check passed (a failure before here is the one line `envhook: …` alone).
  log.info({ cmd: 'nri', plugin, socket: settings.nriSocket, fd }, 'nri: start');
  let first = true;
  supervisor = startSupervisor({
    name,
    index,
    socketPath: settings.nriSocket,
    // the kubelet gives every container of a pod KUBERNETES_SERVICE_HOST
    runsAs: fd !== undefined ? 'pre-installed' : env.KUBERNETES_SERVICE_HOST ? 'daemonset' : 'external',
    log,
    spawnWorker: (wantFd) => {
      const child = spawnWorker(role, wantFd && first ? fd : undefined, env);
      // Only the worker holds the runtime's connection: when it dies, the runtime sees it close.
      if (first && fd !== undefined) fs.closeSync(fd);
      first = false;
      if (settings.fifoPriority !== undefined && child.pid !== undefined) fifo(child.pid, settings.fifoPriority);
      return child;
    },
    publish: (status) => writeStatus(runDir, status),
    onDurations: (seconds) => {
      for (const s of seconds) histogram.observe(s);
    },
  });
  const stop = (signal: NodeJS.Signals) => void supervisor?.stop(signal);
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  try {
    await supervisor.done;
  } finally {
    process.off('SIGTERM', stop);
    process.off('SIGINT', stop);
    await health?.close();
    await lock.release();
  }
  log.info({ cmd: 'nri', plugin }, 'nri: stopped');
}

/** This command's arguments for another process of the same executable (the single executable takes no script). */
function selfArgs(): string[] {
  const sea = process.getBuiltinModule('node:sea')?.isSea() ?? false;
  return sea ? process.argv.slice(2) : [...process.execArgv, ...process.argv.slice(1)];
}

/** The worker: this executable again, with the IPC channel, the daemon's V8 threads and its role. */
function spawnWorker(role: WorkerRole, fd: number | undefined, env: NodeJS.ProcessEnv): ChildProcess {
  const args = selfArgs();
  const childEnv: NodeJS.ProcessEnv = { ...env, [WORKER_ENV]: JSON.stringify(role) };
  if (!hasPoolSize(env))
    childEnv.NODE_OPTIONS = env.NODE_OPTIONS?.trim() ? `${env.NODE_OPTIONS.trim()} ${DAEMON_NODE_OPTION}` : DAEMON_NODE_OPTION;
  for (const k of [...RUNTIME_FD_ENV, HANDED_ENV]) delete childEnv[k];
  let stdio: StdioOptions = ['ignore', 'ignore', 'inherit', 'ipc'];
  if (fd !== undefined) {
    Object.assign(childEnv, { NRI_PLUGIN_SOCKET: '3', NRI_PLUGIN_NAME: role.name, NRI_PLUGIN_IDX: role.index });
    stdio = ['ignore', 'ignore', 'inherit', fd, 'ipc'];
  }
  return spawn(process.execPath, args, { env: childEnv, stdio });
}

/** Starts this command again as the supervisor, with the runtime's connection as its fd 3 (and NRI_PLUGIN_*). */
function handOver(fd: number, env: NodeJS.ProcessEnv, log: Logger): void {
  const child = spawn(process.execPath, selfArgs(), {
    env: { ...env, NRI_PLUGIN_SOCKET: '3', [HANDED_ENV]: '1' },
    stdio: ['ignore', 'ignore', 'inherit', fd],
  });
  child.on('error', (err) => log.error({ err }, 'nri: the supervisor could not be started'));
  child.unref();
  fs.closeSync(fd);
  log.debug({ supervisorPid: child.pid }, "nri: the runtime's connection handed to the supervisor");
}

function parseRole(text: string): WorkerRole {
  try {
    const r = JSON.parse(text) as WorkerRole;
    if (typeof r.name === 'string' && /^[0-9]{2}$/.test(r.index) && typeof r.preinstalled === 'boolean') return r;
  } catch {
    // the message below
  }
  throw new EnvhookError(`${WORKER_ENV} is internal to envhook nri (its worker's role): unset it`);
}

async function runWorker(opts: NriOptions, env: NodeJS.ProcessEnv, role: WorkerRole): Promise<void> {
  const send = process.send?.bind(process);
  if (!send) throw new EnvhookError(`${WORKER_ENV} is internal to envhook nri (its worker's role): unset it`);
  daemonJitTiers();
  const { linkToSupervisor } = await import('../nri/worker-link.ts');
  const { inheritedFd, startDaemon } = await import('../nri/nri-daemon.ts');
  const { createNriHandler } = await import('../nri/handler.ts');
  const { createPodWatcher } = await import('../nri/pod-watch.ts');
  const { createEvictor } = await import('../nri/evict.ts');
  // The heartbeat starts once everything is loaded: until its first beat, the supervisor allows
  // FIRST_BEAT_MS for the start; after it, HANG_MS of silence (STOPPED_MS when stopped) is a hang.
  const link = linkToSupervisor((m) => {
    if (process.connected) send(m);
  });
  const settings = nriSettings(opts, env);
  const fd = inheritedFd(env);
  const log: Logger = createLogger(settings.logFile, settings.logLevel, { stderr: true });
  log.debug({ plugin: `${role.index}-${role.name}`, fd, socket: settings.nriSocket }, 'nri: worker start');
  // Owners survive the kubelet's rewrites: the watcher lives as long as the worker, across sessions.
  const pods = createPodWatcher({ kubeletRoot: settings.kubeletRoot, log, runDir: settings.runDir });
  // The watches of before (this worker's predecessor, or before a runtime restart): a runtime
  // that sends no Synchronize to its pre-installed plugin (containerd 1.7) tells nothing else.
  pods.restore();
  link.watchOwners(() => {
    const { queued: _, ...stats } = pods.registry.stats();
    return stats;
  });
  // Missed containers go to the supervisor (reported once, counted) and to the evictor, which
  // stops those it should over CRI once Synchronize is answered.
  const evictor = createEvictor({ log, observer: link.observer, all: settings.evictUnapplied, criSocket: settings.criSocket });
  const observer: NriObserver = {
    ...link.observer,
    registered(info) {
      evictor.registered(info.runtimeName);
      link.observer.registered(info);
    },
    missed(list) {
      link.observer.missed(list);
      evictor.missed(list);
    },
  };
  const daemon = startDaemon({
    socketPath: settings.nriSocket,
    fd,
    preinstalled: role.preinstalled,
    name: role.name,
    index: role.index,
    handler: createNriHandler({ settings, log, runDir: settings.runDir }),
    pods,
    observer,
    log,
  });
  const stop = () => daemon.stop();
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  // The supervisor is gone (killed): a worker never runs without one.
  process.on('disconnect', stop);
  try {
    const end = await daemon.done;
    if (end === 'runtime-gone' && process.connected) send({ t: 'end', why: end });
  } finally {
    process.off('SIGTERM', stop);
    process.off('SIGINT', stop);
    pods.close();
    evictor.close();
    link.stop();
    if (process.connected) process.disconnect();
  }
}

/**
 * What can fail at start, checked before anything starts (no worker, no status file, no lock):
 * socket paths, the metrics address's form, the run directory. Each a one-line EnvhookError.
 */
async function checkStart(settings: ReturnType<typeof nriSettings>, runDir: string): Promise<void> {
  // Linux's sun_path: 108 bytes with the NUL. Longer, every dial fails (EINVAL): say so once, now.
  for (const [what, p] of [
    ['NRI', settings.nriSocket],
    ['CRI', settings.criSocket],
  ] as const) {
    if (p !== undefined && Buffer.byteLength(p) > 107)
      throw new EnvhookError(`${what} socket path is ${Buffer.byteLength(p)} bytes: a unix socket path has at most 107`);
  }
  if (settings.metricsAddress !== undefined) (await import('../nri/http.ts')).parseAddress(settings.metricsAddress);
  checkRunDirUsable(runDir);
}

/**
 * The metrics and health endpoint, when asked for. It lives in the supervisor, so it answers
 * while a worker is replaced; it is bound before the first worker starts, so an address that
 * cannot be used (busy, not this host's) ends the command with one line, the lock released and
 * nothing started.
 */
async function startHealth(
  address: string | undefined,
  status: () => NriStatus,
  histogram: InstanceType<typeof import('../nri/metrics.ts').DurationHistogram>,
  log: Logger,
  lock: { release(): Promise<void> },
) {
  if (address === undefined) return undefined;
  const { startHealthServer } = await import('../nri/http.ts');
  try {
    const server = await startHealthServer({ address, status, histogram, log });
    log.info({ address: `${server.address.host}:${server.address.port}` }, 'nri: metrics and health endpoint listening');
    return server;
  } catch (err) {
    await lock.release();
    throw err;
  }
}

/** Puts a worker under SCHED_FIFO; the first failure is a warning, later ones are not repeated. */
async function fifoSetter(log: Logger): Promise<(pid: number, priority: number) => void> {
  const { setFifo } = await import('../nri/realtime.ts');
  let warned = false;
  return (pid, priority) => {
    const why = setFifo(pid, priority);
    if (why === undefined) return log.debug({ workerPid: pid, fifoPriority: priority }, 'nri: worker under SCHED_FIFO');
    if (!warned) log.warn({ workerPid: pid, fifoPriority: priority }, `nri: worker left at ordinary priority: ${why}`);
    warned = true;
  };
}
