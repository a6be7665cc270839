// The supervisor of `envhook nri`: it keeps exactly one worker (the NRI session) alive and
// registered. A worker that exits is started again at once (with a growing delay only while
// workers die before they register: a crash loop must not spin); a worker whose heartbeat stops
// for HANG_MS (blocked), or STOPPED_MS when the kernel has it stopped (SIGSTOP), is killed and
// replaced, before the runtime's own 2 s request timeout drops it. A worker that is runnable but
// got less than half of its silence on a CPU is starved, not hung (the kernel's run state and the
// main thread's CPU time, /proc/<pid>/schedstat): on a node at load 37 on two cores each new worker
// went 1.5 s without a beat while it waited its turn, was killed, and its successor, with the same
// start to make, fared no better (4 to 5 kills in a row, 20 s without a plugin). A starved worker
// is killed only once it has run HANG_MS without a beat, or after STARVED_MAX_MS of silence.
// outlives them, so counts and "since" survive a restart.
import type { ChildProcess } from 'node:child_process';
import type { Logger } from '../../log.ts';
import { mainThreadCpuNs, procStat } from '../proc-stat.ts';
import type { NriStatus, RunsAs } from '../status-file.ts';
import { BEAT_MS, type MissedContainer, type WorkerMessage } from '../worker-messages.ts';
import { WorkerStatus } from './worker-status.ts';

/**
 * A worker silent this long is hung: killed and replaced, before the runtime's own 2 s request
 * timeout drops it. Not less: on a starved node (load 20 on 2 cores) healthy workers went silent
 * for just over 1 s (the kill-churn test), and each false kill is an outage of its own.
 */
const HANG_MS = 1500;
/** A worker the kernel says is stopped (SIGSTOP: state T) is hung for sure: sooner. */
const STOPPED_MS = 500;
/** How long a new worker may take to send its first beat (Node's start on a loaded node). */
const FIRST_BEAT_MS = 15_000;
const MAX_RESTART_DELAY_MS = 5000;
/** The longest silence forgiven for time spent waiting for a CPU: past it, a worker is hung however starved. */
const STARVED_MAX_MS = 10_000;

export interface SupervisorOptions {
  name: string;
  index: string;
  socketPath: string;
  /** How this envhook nri was started (the status file says so). */
  runsAs?: RunsAs;
  /** Starts a worker with an IPC channel; `first`: the one given the runtime's connection, if any; `sharing`: during a hand-over. */
  spawnWorker(first: boolean, sharing?: boolean): ChildProcess;
  /** Start sharing: another envhook nri serves beside this one, each container claimed (worker/claims.ts). */
  sharing?: boolean;
  /** A worker's session is in the runtime's list of plugins (its Synchronize answered). */
  onListed?(): void;
  log: Logger;
  /** Called with the status whenever it changed (at most every PUBLISH_MS for counts alone). */
  publish?(status: NriStatus): void;
  /** Every CreateContainer's duration, for the metrics histogram. */
  onDurations?(seconds: readonly number[]): void;
  /** Missed containers the supervisor has not reported before. */
  onMissed?(containers: readonly MissedContainer[]): void;
  hangMs?: number;
  firstBeatMs?: number;
}

type SupervisorEnd = 'stopped' | 'runtime-gone';

export interface Supervisor {
  done: Promise<SupervisorEnd>;
  /** Stops the worker (SIGTERM, SIGKILL after 3 s) and ends; resolves when the worker is gone. */
  stop(reason: string): Promise<void>;
  /** Claim each container (another envhook nri serves beside this one) or not; resolves once the worker does. */
  share(on: boolean): Promise<void>;
  /** Writes the status now. */
  republish(): void;
  status(): NriStatus;
}

/** Milliseconds the worker's main thread has run since its last message; undefined where the kernel keeps no count. */
function cpuSinceBeat(life: Life): number | undefined {
  const now = life.child.pid === undefined ? undefined : mainThreadCpuNs(life.child.pid);
  if (now === undefined || life.cpuAtBeat === undefined) return undefined;
  return Math.max(0, Math.round((now - life.cpuAtBeat) / 1e6));
}

export function startSupervisor(opts: SupervisorOptions): Supervisor {
  const plugin = `${opts.index}-${opts.name}`;
  const status = new WorkerStatus({ plugin, ...opts });
  const keeper = new WorkerKeeper(opts, plugin, status);
  keeper.start(true);
  return {
    done: keeper.done,
    status: () => status.snapshot(),
    stop: (reason) => keeper.stop(reason),
    share: (on) => keeper.share(on),
    republish: () => status.publishNow(),
  };
}

/** One worker's life as the keeper sees it. */
interface Life {
  child: ChildProcess;
  spawnedAt: number;
  /** When its last message came (0: none yet). */
  lastBeat: number;
  /** Its main thread's CPU time (ns) when that message came: undefined where the kernel keeps none. */
  cpuAtBeat: number | undefined;
  registered: boolean;
}

/** Keeps one worker running: started, watched for hangs, replaced when it exits, stopped at the end. */
class WorkerKeeper {
  readonly done: Promise<SupervisorEnd>;
  private finish!: (end: SupervisorEnd) => void;
  private readonly opts: SupervisorOptions;
  private readonly plugin: string;
  private readonly status: WorkerStatus;
  private stopping = false;
  private ending: SupervisorEnd | undefined;
  private worker: ChildProcess | undefined;
  private workerGone: Promise<void> = Promise.resolve();
  private restartDelay = 0;
  private sharing: boolean;
  private sharingAck: ((on: boolean) => void) | undefined;

  constructor(opts: SupervisorOptions, plugin: string, status: WorkerStatus) {
    this.opts = opts;
    this.plugin = plugin;
    this.status = status;
    this.sharing = opts.sharing ?? false;
    this.done = new Promise<SupervisorEnd>((resolve) => (this.finish = resolve));
  }

  start(first: boolean): void {
    const child = this.opts.spawnWorker(first, this.sharing);
    this.worker = child;
    const life: Life = { child, spawnedAt: Date.now(), lastBeat: 0, cpuAtBeat: undefined, registered: false };
    this.status.workerStarted(child.pid);
    const hangCheck = this.watchForHang(life);
    child.on('message', (m: WorkerMessage) => {
      life.lastBeat = Date.now();
      life.cpuAtBeat = child.pid === undefined ? undefined : mainThreadCpuNs(child.pid);
      if (m.t === 'end') this.ending = m.why;
      else if (m.t === 'listed') this.opts.onListed?.();
      else if (m.t === 'sharing') this.sharingAck?.(m.on);
      else
        this.status.receive(m, () => {
          life.registered = true;
          this.restartDelay = 0;
        });
    });
    this.workerGone = new Promise<void>((resolve) => {
      child.once('exit', (code, signal) => {
        clearInterval(hangCheck);
        this.exited(life, resolve, { code, signal });
      });
    });
    child.on('error', (err) => {
      this.opts.log.error({ err, plugin: this.plugin }, 'nri: worker could not be started');
      // A spawn that failed has no process and emits no exit: count it as one, so another is tried.
      if (child.pid === undefined) child.emit('exit', null, null);
    });
  }

  /** Kills the worker once it has been silent past its limit (its first beat, a hang, stopped by the kernel). */
  private watchForHang(life: Life): NodeJS.Timeout {
    const hangMs = this.opts.hangMs ?? HANG_MS;
    const firstBeatMs = this.opts.firstBeatMs ?? FIRST_BEAT_MS;
    const { child } = life;
    let lastCheck = Date.now();
    const hangCheck = setInterval(() => {
      const now = Date.now();
      // The supervisor itself did not run (a loaded node): the beats it has not read yet are not missing.
      const late = now - lastCheck > BEAT_MS;
      lastCheck = now;
      if (late || child.exitCode !== null || child.signalCode !== null) return;
      const silentFor = life.lastBeat === 0 ? now - life.spawnedAt : now - life.lastBeat;
      const state = silentFor > STOPPED_MS ? procStat(child.pid ?? 0)?.state : undefined;
      const isStopped = life.lastBeat !== 0 && (state === 'T' || state === 't');
      const limit = life.lastBeat === 0 ? firstBeatMs : isStopped ? STOPPED_MS : hangMs;
      if (silentFor <= limit) return;
      const ranMs = cpuSinceBeat(life);
      // Runnable, but on a CPU for less than half of its silence: waiting its turn, not hung.
      const starved = life.lastBeat !== 0 && state === 'R' && ranMs !== undefined && ranMs < silentFor / 2;
      if (starved && ranMs < hangMs && silentFor <= STARVED_MAX_MS) return;
      clearInterval(hangCheck);
      this.status.counts.hangs += 1;
      this.opts.log.warn(
        { plugin: this.plugin, state, ranMs, workerPid: child.pid, silentMs: silentFor },
        'nri: worker not answering (hung or stopped): killed, to be replaced',
      );
      child.kill('SIGKILL');
    }, 100);
    return hangCheck;
  }

  /** The worker is gone: the end when stopping or when the runtime is gone, another worker otherwise. */
  private exited(life: Life, gone: () => void, how: { code: number | null; signal: NodeJS.Signals | null }): void {
    if (this.worker === life.child) this.worker = undefined;
    this.status.workerExited();
    gone();
    if (this.stopping) return this.finish(this.ending ?? 'stopped');
    if (this.ending === 'runtime-gone') {
      this.opts.log.info({ plugin: this.plugin }, 'nri: the runtime is gone: the supervisor ends with its worker');
      return this.finish('runtime-gone');
    }
    this.status.counts.workerRestarts += 1;
    // Right away after a worker that registered; growing while workers die before that.
    const delay =
      life.registered || Date.now() - life.spawnedAt > 10_000 ? 0 : Math.min(Math.max(this.restartDelay * 2, 100), MAX_RESTART_DELAY_MS);
    this.restartDelay = delay;
    this.opts.log.warn(
      { plugin: this.plugin, workerPid: life.child.pid, ...how, restartInMs: delay },
      'nri: worker exited: starting another',
    );
    this.status.publish(true);
    setTimeout(() => {
      if (!this.stopping) this.start(false);
    }, delay);
  }

  /** Tells the worker to claim containers or not; resolves when it says so, or is gone (a new one starts as told). */
  async share(on: boolean): Promise<void> {
    this.sharing = on;
    const child = this.worker;
    if (!child?.connected) return;
    const acked = new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 3000);
      const done = () => {
        clearTimeout(timer);
        this.sharingAck = undefined;
        resolve();
      };
      this.sharingAck = (now) => now === on && done();
      child.once('exit', done);
    });
    child.send({ t: 'share', on });
    await acked;
  }

  async stop(reason: string): Promise<void> {
    if (this.stopping) return this.workerGone;
    this.stopping = true;
    this.opts.log.info({ plugin: this.plugin, reason }, 'nri: stopping');
    const child = this.worker;
    if (!child) return this.finish('stopped');
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
    await this.workerGone;
    clearTimeout(timer);
    this.status.publishNow();
  }
}
