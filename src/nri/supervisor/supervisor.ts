// The supervisor of `envhook nri`: it keeps exactly one worker (the NRI session) alive and
// registered. A worker that exits is started again at once (with a growing delay only while
// workers die before they register: a crash loop must not spin); a worker whose heartbeat stops
// for HANG_MS (blocked), or STOPPED_MS when the kernel has it stopped (SIGSTOP), is killed and
// replaced, before the runtime's own 2 s request timeout drops it. The first worker gets the runtime's connection when the runtime
// started envhook (pre-installed); the others dial the runtime's socket as external plugins.
// The supervisor also keeps the status the worker reports (status file, metrics): it outlives
// its workers, so counts and "since" survive a restart.
import type { ChildProcess } from 'node:child_process';
import type { Logger } from '../../log.ts';
import { procStat } from '../proc-stat.ts';
import { emptyCounts, type NriCounts, type NriStatus, type OwnerWatchStats, type RunsAs } from '../status-file.ts';
import { BEAT_MS, type MissedContainer, type WorkerMessage } from '../worker-messages.ts';

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

export interface SupervisorOptions {
  name: string;
  index: string;
  socketPath: string;
  /** How this envhook nri was started (the status file says so). */
  runsAs?: RunsAs;
  /** Starts a worker with an IPC channel; `first`: the one given the runtime's connection, if any. */
  spawnWorker(first: boolean): ChildProcess;
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
  status(): NriStatus;
}

const PUBLISH_MS = 1000;
const MAX_RESTART_DELAY_MS = 5000;
/** Missed container ids remembered so each is reported once (a bound, not a expected size). */
const MISSED_MEMORY = 10_000;

/** True when the kernel has the process stopped (state T or t). */
function stopped(pid: number | undefined): boolean {
  const state = pid === undefined ? undefined : procStat(pid)?.state;
  return state === 'T' || state === 't';
}

/** This process's start time for the status file, when /proc shows it. */
function ownStart(): { pidStartTicks?: number } {
  const ticks = procStat(process.pid)?.startTicks;
  return ticks === undefined || !Number.isSafeInteger(ticks) ? {} : { pidStartTicks: ticks };
}

export function startSupervisor(opts: SupervisorOptions): Supervisor {
  const { log } = opts;
  const hangMs = opts.hangMs ?? HANG_MS;
  const firstBeatMs = opts.firstBeatMs ?? FIRST_BEAT_MS;
  const plugin = `${opts.index}-${opts.name}`;
  const iso = (ms = Date.now()) => new Date(ms).toISOString();
  const counts: NriCounts = emptyCounts();
  const startedAt = iso();
  let status: NriStatus = {
    version: 1,
    pid: process.pid,
    ...ownStart(),
    startedAt,
    plugin,
    ...(opts.runsAs ? { runsAs: opts.runsAs } : {}),
    connected: false,
    since: startedAt,
    counts,
    updatedAt: startedAt,
  };
  const reported = new Set<string>();
  // The owner watcher's counters as the current worker last sent them (it counts from its own start).
  let workerOwners: OwnerWatchStats | undefined;

  let publishTimer: NodeJS.Timeout | undefined;
  let lastPublish = 0;
  const publishNow = () => {
    publishTimer = undefined;
    lastPublish = Date.now();
    status = { ...status, counts: { ...counts }, updatedAt: iso() };
    try {
      opts.publish?.(status);
    } catch (err) {
      log.warn({ err }, 'nri: status not written');
    }
  };
  /** `urgent`: a change of state, written in the next turn; counts alone at most every PUBLISH_MS. */
  const publish = (urgent: boolean) => {
    if (urgent) {
      clearTimeout(publishTimer);
      publishTimer = setTimeout(publishNow, 0);
    } else if (!publishTimer) publishTimer = setTimeout(publishNow, Math.max(0, lastPublish + PUBLISH_MS - Date.now()));
  };
  const setConnected = (connected: boolean, extra: Partial<NriStatus> = {}) => {
    const changed = status.connected !== connected;
    status = { ...status, ...extra, connected, ...(changed ? { since: iso() } : {}) };
    publish(true);
  };

  let stopping = false;
  let ending: SupervisorEnd | undefined;
  let worker: ChildProcess | undefined;
  let workerGone: Promise<void> = Promise.resolve();
  let restartDelay = 0;
  let finish!: (end: SupervisorEnd) => void;
  const done = new Promise<SupervisorEnd>((resolve) => (finish = resolve));

  function start(first: boolean): void {
    const child = opts.spawnWorker(first);
    worker = child;
    const spawnedAt = Date.now();
    let lastBeat = 0;
    let registered = false;
    let lastCheck = Date.now();
    status = { ...status, workerPid: child.pid };
    workerOwners = undefined;
    publish(true);
    const hangCheck = setInterval(() => {
      const now = Date.now();
      // The supervisor itself did not run (a loaded node): the beats it has not read yet are not missing.
      const late = now - lastCheck > BEAT_MS;
      lastCheck = now;
      if (late || child.exitCode !== null || child.signalCode !== null) return;
      const silentFor = lastBeat === 0 ? now - spawnedAt : now - lastBeat;
      const limit = lastBeat === 0 ? firstBeatMs : silentFor > STOPPED_MS && stopped(child.pid) ? STOPPED_MS : hangMs;
      if (silentFor <= limit) return;
      clearInterval(hangCheck);
      counts.hangs += 1;
      log.warn(
        { plugin, workerPid: child.pid, silentMs: silentFor },
        'nri: worker not answering (hung or stopped): killed, to be replaced',
      );
      child.kill('SIGKILL');
    }, 100);
    child.on('message', (m: WorkerMessage) => {
      lastBeat = Date.now();
      receive(m, () => {
        registered = true;
        restartDelay = 0;
      });
    });
    workerGone = new Promise<void>((resolve) => {
      child.once('exit', (code, signal) => {
        clearInterval(hangCheck);
        if (worker === child) worker = undefined;
        if (status.owners) status = { ...status, owners: { ...status.owners, pods: 0, volumes: 0, watches: 0, polled: 0 } };
        if (status.connected) setConnected(false, { workerPid: undefined });
        else status = { ...status, workerPid: undefined };
        resolve();
        if (stopping) return finish(ending ?? 'stopped');
        if (ending === 'runtime-gone') {
          log.info({ plugin }, 'nri: the runtime is gone: the supervisor ends with its worker');
          return finish('runtime-gone');
        }
        counts.workerRestarts += 1;
        // Right away after a worker that registered; growing while workers die before that.
        const delay = registered || Date.now() - spawnedAt > 10_000 ? 0 : Math.min(Math.max(restartDelay * 2, 100), MAX_RESTART_DELAY_MS);
        restartDelay = delay;
        log.warn({ plugin, workerPid: child.pid, code, signal, restartInMs: delay }, 'nri: worker exited: starting another');
        publish(true);
        setTimeout(() => {
          if (!stopping) start(false);
        }, delay);
      });
    });
    child.on('error', (err) => {
      log.error({ err, plugin }, 'nri: worker could not be started');
      // A spawn that failed has no process and emits no exit: count it as one, so another is tried.
      if (child.pid === undefined) child.emit('exit', null, null);
    });
  }

  /** Gauges as the worker has them; its counters added to the supervisor's since the last report. */
  function ownersReported(o: OwnerWatchStats): void {
    const was = workerOwners;
    workerOwners = o;
    type Counter = 'ownedBeforeSwap' | 'ownedAfterSwap' | 'refusedByKernel' | 'refusedByBound' | 'copyUpdates' | 'copyFailures';
    const delta = (k: Counter) => Math.max(0, (o[k] ?? 0) - (was?.[k] ?? 0));
    const sum: Partial<OwnerWatchStats> & Pick<OwnerWatchStats, Counter & keyof OwnerWatchStats> = status.owners ?? {
      ownedBeforeSwap: 0,
      ownedAfterSwap: 0,
      refusedByKernel: 0,
      refusedByBound: 0,
    };
    const owned = delta('ownedBeforeSwap') + delta('ownedAfterSwap');
    counts.ownerRechowns += owned;
    status = {
      ...status,
      owners: {
        pods: o.pods,
        volumes: o.volumes,
        watches: o.watches,
        polled: o.polled,
        ownedBeforeSwap: sum.ownedBeforeSwap + delta('ownedBeforeSwap'),
        ownedAfterSwap: sum.ownedAfterSwap + delta('ownedAfterSwap'),
        refusedByKernel: sum.refusedByKernel + delta('refusedByKernel'),
        refusedByBound: sum.refusedByBound + delta('refusedByBound'),
        // A worker that keeps owned copies reports them (every worker of this build does).
        ...(o.copies === undefined
          ? {}
          : {
              copies: o.copies,
              copyUpdates: (sum.copyUpdates ?? 0) + delta('copyUpdates'),
              copyFailures: (sum.copyFailures ?? 0) + delta('copyFailures'),
              copyLatency: addLatency(sum.copyLatency, o.copyLatency, was?.copyLatency),
            }),
      },
    };
  }

  function receive(m: WorkerMessage, onRegistered: () => void): void {
    switch (m.t) {
      case 'beat':
        if (m.d) {
          counts.adjusted += m.d.adjusted;
          counts.empty += m.d.empty;
          counts.refused += m.d.refused;
          counts.errors += m.d.errors;
          opts.onDurations?.(m.d.durations);
          if (m.d.lastError !== undefined) status = { ...status, lastError: { at: iso(), message: m.d.lastError } };
          publish(false);
        }
        if (m.o) {
          ownersReported(m.o);
          publish(false);
        }
        return;
      case 'registered':
        counts.registrations += 1;
        onRegistered();
        setConnected(true, {
          runtime: { name: m.runtimeName, version: m.runtimeVersion },
          ...(m.nriVersion ? { nriVersion: m.nriVersion } : {}),
          ...(m.socket ? { socket: m.socket } : { socket: undefined }),
        });
        return;
      case 'disconnected':
        setConnected(false);
        return;
      case 'missed': {
        const fresh = m.containers.filter((c) => !reported.has(c.id));
        for (const c of fresh) {
          if (reported.size >= MISSED_MEMORY) reported.clear();
          reported.add(c.id);
          log.warn(
            {
              container: c.name,
              id: c.id,
              pod: c.pod,
              namespace: c.namespace,
              podUid: c.podUid,
              ...(c.invalid ? { invalid: c.invalid } : {}),
            },
            'nri: container runs without envhook: created while the plugin was not registered',
          );
        }
        if (fresh.length > 0) {
          counts.missed += fresh.length;
          opts.onMissed?.(fresh);
          publish(true);
        }
        return;
      }
      case 'evicted':
        counts.evicted += m.ids.length;
        counts.evictionsFailed += m.failed.length;
        publish(true);
        return;
      case 'end':
        ending = m.why;
        return;
    }
  }

  start(true);

  return {
    done,
    status: () => ({ ...status, counts: { ...counts } }),
    async stop(reason) {
      if (stopping) return workerGone;
      stopping = true;
      log.info({ plugin, reason }, 'nri: stopping');
      const child = worker;
      if (!child) {
        finish('stopped');
        return;
      }
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
      await workerGone;
      clearTimeout(timer);
      clearTimeout(publishTimer);
      publishNow();
    },
  };
}

type LatencyCounts = NonNullable<OwnerWatchStats['copyLatency']>;

/** The supervisor's histogram plus what the worker observed since its last report (a new worker starts at 0). */
function addLatency(total: LatencyCounts | undefined, now: LatencyCounts | undefined, was: LatencyCounts | undefined): LatencyCounts {
  const base = total ?? { buckets: [], sum: 0, count: 0 };
  if (now === undefined) return base;
  const prev = was !== undefined && was.count <= now.count ? was : { buckets: [], sum: 0, count: 0 };
  return {
    buckets: now.buckets.map((c, i) => (base.buckets[i] ?? 0) + Math.max(0, c - (prev.buckets[i] ?? 0))),
    sum: base.sum + Math.max(0, now.sum - prev.sum),
    count: base.count + Math.max(0, now.count - prev.count),
  };
}
