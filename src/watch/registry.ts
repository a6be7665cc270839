// The watcher's registry, for the resident processes (`envhook nri`, `envhook watch`): pods are
// added with the volumes whose owners the start applied, and removed when they end. It never
// throws into its caller for a volume's sake: an unmappable UID, a missing directory or an
// inotify limit is logged and that volume is skipped or polled. Nothing here keeps a process
// alive (watches and timers are unref'd): the daemon that owns the registry decides. A copied
// volume whose kubelet directory goes has its copy removed here, for both processes.
import type { Logger } from '../log.ts';
import { describeError } from '../errors.ts';
import type { VolumeOwner } from '../ownership/annotation.ts';
import { ownersOf } from '../ownership/owners.ts';
import type { UidTranslation } from '../ownership/uidmap.ts';
import { createInotify, type Inotify, type WatchFn } from './inotify.ts';
import { createScheduler, type Scheduler } from './scheduler.ts';
import { VolumeWatch, type VolumeEnv } from './volume.ts';
import { CopyWatch, type CopyEnv } from './copy-watch.ts';
import { copyDir, type CopyPlace } from '../mirror/layout.ts';
import { inlineCopier, type Copier } from '../mirror/copier.ts';
import { createLatency, type Latency } from './latency.ts';

export interface WatchVolume {
  /** The volume's directory: `<pod>/volumes/kubernetes.io~<plugin>/<name>`. */
  dir: string;
  /** The annotation's entry for it (container UIDs). */
  owners: VolumeOwner;
  /** How its UIDs reach the disk, as at start (ownership/uidmap.ts). */
  uidMapping: UidTranslation;
  /** The container reads envhook's owned copy there: rewrites are copied, the kubelet's files left alone. */
  copy?: CopyPlace | undefined;
}

type Watched = VolumeWatch | CopyWatch;

/** A volume's key in its pod: a copy and a chown in place of the same kubelet volume are two watches. */
const keyOf = (v: { dir: string; copy?: CopyPlace | undefined }): string => (v.copy ? copyDir(v.copy) : v.dir);

export interface RegistryOptions {
  log: Logger;
  /** Pass interval of a volume that has no watch (inotify limit reached). Default 1000 ms. */
  pollMs?: number;
  /** Every volume gets a pass this often, for events the kernel dropped. Default 60000 ms. */
  safetyMs?: number;
  /** New timestamped directories watched at once per volume. Default 2. */
  maxPending?: number;
  /** inotify watches for the process, and for one pod (inotify.ts); beyond them a volume is polled. */
  maxWatches?: number;
  maxPodWatches?: number;
  /** Own a new directory's files before `..data` points at them. Default true (false: bench/watch.ts's baseline). */
  preSwap?: boolean;
  watch?: WatchFn;
  /** A volume's directory went away (its watch is closed by then; a copy of it is removed). */
  onVolumeGone?: (podUid: string, dir: string) => void;
  /** Who makes the owned copies (mirror/copier.ts): the NRI worker's sliced copier; default: in one go. */
  copier?: Copier;
}

interface RegistryStats {
  pods: number;
  volumes: number;
  /** inotify watches open. */
  watches: number;
  /** Volumes polled for want of a watch. */
  polled: number;
  /** Passes waiting for their turn. */
  queued: number;
  /** Watches the kernel refused at its inotify limit since the start (ENOSPC, EMFILE, ENFILE). */
  refusedByKernel: number;
  /** Watches refused at maxWatches or maxPodWatches since the start. */
  refusedByBound: number;
  /** Files given their owner before `..data` pointed at them, since the start. */
  ownedBeforeSwap: number;
  /** Files given their owner after `..data` pointed at them (a reader could find them root's), since the start. */
  ownedAfterSwap: number;
  /** Volumes read through an owned copy now. */
  copies: number;
  /** Copies swapped in after a kubelet rewrite (or a pass), since the start, and those that failed. */
  copyUpdates: number;
  copyFailures: number;
  /** Seconds from the kubelet's swap to the copy's, as histogram buckets (cumulative counts), sum and count. */
  copyLatency: ReturnType<Latency['snapshot']>;
}

export interface Registry {
  /** Sets the pod's watched volumes to exactly these (a volume already watched keeps its watch). */
  add(podUid: string, volumes: readonly WatchVolume[]): void;
  remove(podUid: string): void;
  /** The pod has a volume watched (or polled). */
  has(podUid: string): boolean;
  close(): void;
  stats(): RegistryStats;
}

/** What the registry's steps share: the pods' watches, what they run with, and the counts stats() reports. */
interface RegistryState {
  log: Logger;
  scheduler: Scheduler;
  inotify: Inotify;
  /** Each pod's watches by volume key (keyOf). */
  pods: Map<string, Map<string, Watched>>;
  env: VolumeEnv;
  copyEnv: CopyEnv;
  counts: { ownedBeforeSwap: number; ownedAfterSwap: number; copyUpdates: number; copyFailures: number };
  latency: Latency;
}

export function createRegistry(opts: RegistryOptions): Registry {
  const { pollMs = 1000, safetyMs = 60_000 } = opts;
  const state = registryState(opts, pollMs);
  const timer = startPasses(state.pods, pollMs, safetyMs);
  return {
    add(podUid, volumes) {
      setPodVolumes(state, podUid, volumes);
    },
    remove(podUid) {
      const vols = state.pods.get(podUid);
      if (!vols) return;
      for (const v of vols.values()) v.close();
      state.pods.delete(podUid);
      state.log.info({ podUid, volumes: vols.size }, 'stopped watching the pod');
    },
    has(podUid) {
      return state.pods.has(podUid);
    },
    close() {
      clearInterval(timer);
      each(state.pods, (v) => v.close());
      state.pods.clear();
      state.scheduler.close();
    },
    stats() {
      return statsOf(state);
    },
  };
}

/** The scheduler, inotify, and the environments the volume and copy watches report to. */
function registryState(opts: RegistryOptions, pollMs: number): RegistryState {
  const { log, maxPending = 2, preSwap = true } = opts;
  const scheduler = createScheduler();
  const inotify = createInotify(log, opts.watch, pollMs, { maxWatches: opts.maxWatches, maxPodWatches: opts.maxPodWatches });
  const pods = new Map<string, Map<string, Watched>>();
  const counts = { ownedBeforeSwap: 0, ownedAfterSwap: 0, copyUpdates: 0, copyFailures: 0 };
  const latency = createLatency();
  const copier = opts.copier ?? inlineCopier();
  const onGone = (v: Watched): void => {
    const vols = pods.get(v.podUid);
    const key = v instanceof CopyWatch ? copyDir(v.place) : v.target.dir;
    if (vols?.get(key) !== v) return;
    vols.delete(key);
    if (vols.size === 0) pods.delete(v.podUid);
    log.info({ podUid: v.podUid, volume: v.target.volume, dir: v.target.dir }, 'watched volume is gone');
    if (v instanceof CopyWatch) removeGoneCopy(v, copier, log);
    opts.onVolumeGone?.(v.podUid, v.target.dir);
  };
  const owned = (pass: 'before' | 'after', files: number): void => {
    if (pass === 'before') counts.ownedBeforeSwap += files;
    else counts.ownedAfterSwap += files;
  };
  const env = { log, scheduler, inotify, maxPending, preSwap, onGone, owned };
  const copyEnv = {
    log,
    scheduler,
    inotify,
    copier,
    onGone,
    copied: (seconds: number) => {
      counts.copyUpdates++;
      latency.observe(seconds);
    },
    failed: () => void counts.copyFailures++,
  };
  return { log, scheduler, inotify, pods, env, copyEnv, counts, latency };
}

/** Every pollMs a pass of each polled volume; every safetyMs a pass of all, for events the kernel dropped. */
function startPasses(pods: RegistryState['pods'], pollMs: number, safetyMs: number): NodeJS.Timeout {
  let ticks = 0;
  return setInterval(() => {
    const all = ++ticks * pollMs >= safetyMs;
    if (all) ticks = 0;
    for (const vols of pods.values()) for (const v of vols.values()) if (all || v.degraded) v.poll();
  }, pollMs).unref();
}

/** Sets the pod's watched volumes to exactly these: a volume already watched keeps its watch. */
function setPodVolumes(state: RegistryState, podUid: string, volumes: readonly WatchVolume[]): void {
  const { log, pods } = state;
  const old = pods.get(podUid) ?? new Map<string, Watched>();
  const next = new Map<string, Watched>();
  for (const vol of volumes) {
    let owners;
    try {
      owners = ownersOf(vol.owners, vol.uidMapping);
    } catch (err) {
      log.warn({ podUid, volume: vol.owners.volume, err }, `not watched: ${describeError(err)}`);
      continue;
    }
    const target = { volume: vol.owners.volume, dir: vol.dir, ...owners };
    const key = keyOf(vol);
    const known = old.get(key) ?? next.get(key);
    if (known) {
      known.update(target);
      next.set(key, known);
      continue;
    }
    const v = vol.copy ? new CopyWatch(podUid, target, vol.copy, state.copyEnv) : new VolumeWatch(podUid, target, state.env);
    next.set(key, v);
    v.start();
    const copy = vol.copy ? copyDir(vol.copy) : undefined;
    log.info({ podUid, volume: target.volume, dir: vol.dir, copy, polled: v.degraded }, 'watching volume owners');
  }
  for (const [dir, v] of old) if (next.get(dir) !== v) v.close();
  if (next.size > 0) pods.set(podUid, next);
  else pods.delete(podUid);
}

function statsOf({ pods, inotify, scheduler, counts, latency }: RegistryState): RegistryStats {
  let volumes = 0;
  let polled = 0;
  let copies = 0;
  each(pods, (v) => {
    volumes++;
    if (v.degraded) polled++;
    if (v instanceof CopyWatch) copies++;
  });
  return {
    pods: pods.size,
    volumes,
    watches: inotify.open,
    polled,
    queued: scheduler.pending,
    refusedByKernel: inotify.refusedByKernel,
    refusedByBound: inotify.refusedByBound,
    ownedBeforeSwap: counts.ownedBeforeSwap,
    ownedAfterSwap: counts.ownedAfterSwap,
    copies,
    copyUpdates: counts.copyUpdates,
    copyFailures: counts.copyFailures,
    copyLatency: latency.snapshot(),
  };
}

/**
 * The kubelet removed the volume's directory (a terminated pod's volumes torn down, its directory
 * kept until the pod object goes: completed Jobs, evicted pods): its copy holds what no container
 * of a running pod reads, so it goes too.
 */
function removeGoneCopy(v: CopyWatch, copier: Copier, log: Logger): void {
  // By the copier: a copy of thousands of files is not removed on this loop.
  copier.removeCopy(v.place).then(
    (removed) => {
      if (removed)
        log.info({ podUid: v.podUid, volume: v.place.volume, why: "the kubelet's volume directory is gone" }, 'owned copy removed');
    },
    (err: unknown) => log.warn({ podUid: v.podUid, volume: v.place.volume, err }, `owned copy not removed: ${describeError(err)}`),
  );
}

function each(pods: RegistryState['pods'], fn: (v: Watched) => void): void {
  for (const vols of pods.values()) for (const v of vols.values()) fn(v);
}
