// The status the supervisor keeps across its workers (the status file, the metrics): counts and
// "since" outlive a worker, so they survive a restart. What each worker reports
// (worker-messages.ts) is folded in here; a change of state is published in the next turn, counts
// alone at most every PUBLISH_MS. Missed containers are logged and counted once each; those that
// still run without their env (not evicted, not ended: unapplied.ts) are listed.
import type { Logger } from '../../log.ts';
import { procStat } from '../proc-stat.ts';
import { emptyCounts, type NriCounts, type NriStatus, type OwnerWatchStats, type RunsAs } from '../status-file.ts';
import type { MissedContainer, WorkerMessage } from '../worker-messages.ts';
import { boundUnapplied, stillRuns, unappliedEntry } from '../unapplied.ts';

export interface StatusOptions {
  plugin: string;
  runsAs?: RunsAs | undefined;
  log: Logger;
  /** Called with the status whenever it changed (at most every PUBLISH_MS for counts alone). */
  publish?: ((status: NriStatus) => void) | undefined;
  /** Every CreateContainer's duration, for the metrics histogram. */
  onDurations?: ((seconds: readonly number[]) => void) | undefined;
  /** Missed containers the supervisor has not reported before. */
  onMissed?: ((containers: readonly MissedContainer[]) => void) | undefined;
}

const PUBLISH_MS = 1000;
/** Missed container ids remembered so each is reported once (a bound, not an expected size). */
const MISSED_MEMORY = 10_000;

const iso = (ms = Date.now()) => new Date(ms).toISOString();

/** This process's start time for the status file, when /proc shows it. */
function ownStart(): { pidStartTicks?: number } {
  const ticks = procStat(process.pid)?.startTicks;
  return ticks === undefined || !Number.isSafeInteger(ticks) ? {} : { pidStartTicks: ticks };
}

export class WorkerStatus {
  readonly counts: NriCounts = emptyCounts();
  private status: NriStatus;
  private readonly opts: StatusOptions;
  private readonly reported = new Set<string>();
  /** The owner watcher's counters as the current worker last sent them (it counts from its own start). */
  private workerOwners: OwnerWatchStats | undefined;
  private publishTimer: NodeJS.Timeout | undefined;
  private lastPublish = 0;

  constructor(opts: StatusOptions) {
    this.opts = opts;
    const startedAt = iso();
    this.status = {
      version: 1,
      pid: process.pid,
      ...ownStart(),
      startedAt,
      plugin: opts.plugin,
      ...(opts.runsAs ? { runsAs: opts.runsAs } : {}),
      connected: false,
      since: startedAt,
      counts: this.counts,
      updatedAt: startedAt,
    };
  }

  /** The status now, counts included, without the unapplied containers that have ended. */
  snapshot(): NriStatus {
    this.pruneUnapplied();
    return { ...this.status, counts: { ...this.counts } };
  }

  /** Drops the unapplied containers whose process has ended; true when one was dropped. */
  private pruneUnapplied(): boolean {
    const list = this.status.unapplied;
    if (!list) return false;
    const running = list.filter((u) => stillRuns(u));
    if (running.length === list.length) return false;
    this.status = { ...this.status, unapplied: running };
    return true;
  }

  /** Writes the status now (a failure is a warning: the supervisor goes on). */
  publishNow(): void {
    clearTimeout(this.publishTimer);
    this.publishTimer = undefined;
    this.lastPublish = Date.now();
    this.pruneUnapplied();
    this.status = { ...this.status, counts: { ...this.counts }, updatedAt: iso() };
    try {
      this.opts.publish?.(this.status);
    } catch (err) {
      this.opts.log.warn({ err }, 'nri: status not written');
    }
  }

  /** `urgent`: a change of state, written in the next turn; counts alone at most every PUBLISH_MS. */
  publish(urgent: boolean): void {
    if (urgent) {
      clearTimeout(this.publishTimer);
      this.publishTimer = setTimeout(() => this.publishNow(), 0);
    } else if (!this.publishTimer)
      this.publishTimer = setTimeout(() => this.publishNow(), Math.max(0, this.lastPublish + PUBLISH_MS - Date.now()));
  }

  /** A new worker: its pid; the owner watcher's figures are its own from now on. */
  workerStarted(pid: number | undefined): void {
    this.status = { ...this.status, workerPid: pid };
    this.workerOwners = undefined;
    this.publish(true);
  }

  /** The worker is gone: nothing watched, not connected. */
  workerExited(): void {
    const { owners } = this.status;
    if (owners) this.status = { ...this.status, owners: { ...owners, pods: 0, volumes: 0, watches: 0, polled: 0 } };
    if (this.status.connected) this.setConnected(false, { workerPid: undefined });
    else this.status = { ...this.status, workerPid: undefined };
  }

  private setConnected(connected: boolean, extra: Partial<NriStatus> = {}): void {
    const changed = this.status.connected !== connected;
    this.status = { ...this.status, ...extra, connected, ...(changed ? { since: iso() } : {}) };
    this.publish(true);
  }

  /** One message of the worker; `onRegistered` when it registered with the runtime. */
  receive(m: WorkerMessage, onRegistered: () => void): void {
    switch (m.t) {
      case 'beat':
        return this.beat(m);
      case 'registered':
        this.counts.registrations += 1;
        onRegistered();
        return this.setConnected(true, {
          runtime: { name: m.runtimeName, version: m.runtimeVersion },
          ...(m.nriVersion ? { nriVersion: m.nriVersion } : {}),
          ...(m.socket ? { socket: m.socket } : { socket: undefined }),
        });
      case 'disconnected':
        return this.setConnected(false);
      case 'missed':
        return this.missed(m.containers, m.whole);
      case 'evicted':
        this.evictedUnapplied(m.ids, m.failed);
        this.counts.evicted += m.ids.length;
        this.counts.evictionsFailed += m.failed.length;
        return this.publish(true);
      case 'end':
      case 'listed':
      case 'sharing':
        return;
    }
  }

  private beat({ d, o }: Extract<WorkerMessage, { t: 'beat' }>): void {
    if (d) {
      this.counts.adjusted += d.adjusted;
      this.counts.empty += d.empty;
      this.counts.refused += d.refused;
      this.counts.errors += d.errors;
      this.opts.onDurations?.(d.durations);
      if (d.lastError !== undefined) this.status = { ...this.status, lastError: { at: iso(), message: d.lastError } };
      this.publish(false);
    }
    if (o) {
      this.ownersReported(o);
      this.publish(false);
    }
  }

  /** Each missed container logged and counted once (names and ids only); listed while it runs without its env. */
  private missed(containers: readonly MissedContainer[], whole: boolean): void {
    this.listUnapplied(containers, whole);
    const fresh = containers.filter((c) => !this.reported.has(c.id));
    for (const c of fresh) {
      if (this.reported.size >= MISSED_MEMORY) this.reported.clear();
      this.reported.add(c.id);
      this.opts.log.warn(
        { container: c.name, id: c.id, pod: c.pod, namespace: c.namespace, podUid: c.podUid, ...(c.invalid ? { invalid: c.invalid } : {}) },
        'nri: container runs without envhook: created while the plugin was not registered',
      );
    }
    if (fresh.length > 0) {
      this.counts.missed += fresh.length;
      this.opts.onMissed?.(fresh);
    }
    this.publish(true);
  }

  /** A Synchronize's list replaces the one before (what it no longer lists has ended); a PostCreateContainer's adds. */
  private listUnapplied(containers: readonly MissedContainer[], whole: boolean): void {
    const before = new Map((whole ? [] : (this.status.unapplied ?? [])).map((u) => [u.id, u]));
    for (const c of containers) before.set(c.id, unappliedEntry(c));
    this.status = { ...this.status, unapplied: boundUnapplied([...before.values()]) };
  }

  /** Evicted: no longer running without its env; an eviction that failed: marked so. */
  private evictedUnapplied(ids: readonly string[], failed: readonly string[]): void {
    const list = this.status.unapplied;
    if (!list || ids.length + failed.length === 0) return;
    const [gone, kept] = [new Set(ids), new Set(failed)];
    const unapplied = list.filter((u) => !gone.has(u.id)).map((u) => (kept.has(u.id) ? { ...u, evictionFailed: true } : u));
    this.status = { ...this.status, unapplied };
  }

  /** Gauges as the worker has them; its counters added to the supervisor's since the last report. */
  private ownersReported(o: OwnerWatchStats): void {
    const was = this.workerOwners;
    this.workerOwners = o;
    type Counter = 'ownedBeforeSwap' | 'ownedAfterSwap' | 'refusedByKernel' | 'refusedByBound' | 'copyUpdates' | 'copyFailures';
    const delta = (k: Counter) => Math.max(0, (o[k] ?? 0) - (was?.[k] ?? 0));
    const sum: Partial<OwnerWatchStats> & Pick<OwnerWatchStats, Counter & keyof OwnerWatchStats> = this.status.owners ?? {
      ownedBeforeSwap: 0,
      ownedAfterSwap: 0,
      refusedByKernel: 0,
      refusedByBound: 0,
    };
    this.counts.ownerRechowns += delta('ownedBeforeSwap') + delta('ownedAfterSwap');
    this.status = {
      ...this.status,
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
              ...(o.copyBytes === undefined ? {} : { copyBytes: o.copyBytes, copyFiles: o.copyFiles ?? 0 }),
              copyUpdates: (sum.copyUpdates ?? 0) + delta('copyUpdates'),
              copyFailures: (sum.copyFailures ?? 0) + delta('copyFailures'),
              copyLatency: addLatency(sum.copyLatency, o.copyLatency, was?.copyLatency),
            }),
      },
    };
  }
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
