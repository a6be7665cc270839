// fs.watch (inotify on Linux) for the watcher, so that no watch error ever reaches a caller,
// with a bounded cost: at most `maxWatches` watches for the process (the node) and
// `maxPodWatches` for one pod (each counts against the kernel's fs.inotify.max_user_watches,
// which root's other daemons, the kubelet first, share). A watch refused, at our bound or at
// the kernel's limit (ENOSPC: fs.inotify.max_user_watches; EMFILE/ENFILE: no descriptor for
// the inotify instance), is counted (stats: the status file shows the counts), its first
// refusal of each kind is logged once for the whole process with what to raise, and the caller
// falls back to polling; a directory already gone is not an error.
import fs from 'node:fs';
import type { Logger } from '../log.ts';

export type WatchListener = (event: string, name: string | null) => void;
/** fs.watch's shape; the registry's tests may wrap it. */
export type WatchFn = (dir: string, listener: WatchListener) => fs.FSWatcher;

/** Not persistent: the watches never keep a process alive on their own (the daemon decides). */
const defaultWatch: WatchFn = (dir, listener) => fs.watch(dir, { persistent: false, encoding: 'utf8' }, listener);

const KERNEL_LIMITS: Record<string, string> = {
  ENOSPC: 'fs.inotify.max_user_watches',
  EMFILE: 'fs.inotify.max_user_instances or the open-file limit (LimitNOFILE)',
  ENFILE: "the system's open-file table (fs.file-max)",
};

/** Default bounds: a volume takes 1 watch, plus 1 (and its subdirectories) per new directory while the kubelet writes it. */
const DEFAULT_MAX_WATCHES = 4096;
const DEFAULT_MAX_POD_WATCHES = 64;

/** An established watch: close() is idempotent. */
export interface Watch {
  close(): void;
}

export interface InotifyBounds {
  maxWatches?: number;
  maxPodWatches?: number;
}

export interface Inotify {
  /**
   * A watch on `dir` counted against `pod`, or 'limit' (refused: counted, logged once per kind)
   * or 'gone' (no such directory). `onError` runs when an established watch fails later; the
   * watch is closed by then.
   */
  watch(dir: string, listener: WatchListener, onError: () => void, pod?: string): Watch | 'limit' | 'gone';
  /** Watches open now. */
  readonly open: number;
  /** Watches the kernel refused at its limit, since the start. */
  readonly refusedByKernel: number;
  /** Watches refused at our own bound (per node or per pod), since the start. */
  readonly refusedByBound: number;
}

/** The bounds and counts one createInotify shares with its helpers. */
interface InotifyState {
  log: Logger;
  watchFn: WatchFn;
  pollMs: number;
  maxWatches: number;
  maxPodWatches: number;
  /** Kinds of refusal already logged (once each for the process). */
  logged: Set<string>;
  perPod: Map<string, number>;
  open: number;
  refusedByKernel: number;
  refusedByBound: number;
}

export function createInotify(log: Logger, watchFn: WatchFn = defaultWatch, pollMs = 1000, bounds: InotifyBounds = {}): Inotify {
  const { maxWatches = DEFAULT_MAX_WATCHES, maxPodWatches = DEFAULT_MAX_POD_WATCHES } = bounds;
  const state: InotifyState = {
    log,
    watchFn,
    pollMs,
    maxWatches,
    maxPodWatches,
    logged: new Set<string>(),
    perPod: new Map<string, number>(),
    open: 0,
    refusedByKernel: 0,
    refusedByBound: 0,
  };
  return {
    watch(dir, listener, onError, pod) {
      const refused = overBound(state, dir, pod);
      if (refused !== undefined) return refused;
      const w = openWatch(state, dir, listener);
      return typeof w === 'string' ? w : track(state, w, dir, onError, pod);
    },
    get open() {
      return state.open;
    },
    get refusedByKernel() {
      return state.refusedByKernel;
    },
    get refusedByBound() {
      return state.refusedByBound;
    },
  };
}

/** 'limit' when a new watch would pass our bound for the node or for the pod. */
function overBound(state: InotifyState, dir: string, pod: string | undefined): 'limit' | undefined {
  const { maxWatches, maxPodWatches } = state;
  if (state.open >= maxWatches)
    return refuse(state, 'node', { dir, maxWatches }, `inotify limit reached: envhook's bound of ${maxWatches} watches for the node`);
  if (pod !== undefined && (state.perPod.get(pod) ?? 0) >= maxPodWatches)
    return refuse(
      state,
      'pod',
      { dir, podUid: pod, maxPodWatches },
      `inotify limit reached: envhook's bound of ${maxPodWatches} watches for one pod`,
    );
  return undefined;
}

/** The kernel's watch, or why there is none: never throws. */
function openWatch(state: InotifyState, dir: string, listener: WatchListener): fs.FSWatcher | 'limit' | 'gone' {
  try {
    return state.watchFn(dir, listener);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? '';
    if (code === 'ENOENT' || code === 'ENOTDIR') return 'gone';
    if (KERNEL_LIMITS[code])
      return refuse(
        state,
        'kernel',
        { code, dir },
        `inotify limit reached: the kernel refused a watch (${code}; raise ${KERNEL_LIMITS[code]})`,
      );
    state.log.warn({ code, dir }, 'cannot watch a volume directory: it is polled instead');
    return 'limit';
  }
}

/** Counts an established watch (for the node and the pod) until it is closed or fails. */
function track(state: InotifyState, w: fs.FSWatcher, dir: string, onError: () => void, pod: string | undefined): Watch {
  state.open++;
  if (pod !== undefined) state.perPod.set(pod, (state.perPod.get(pod) ?? 0) + 1);
  let closed = false;
  const watch: Watch = {
    close() {
      if (closed) return;
      closed = true;
      state.open--;
      if (pod !== undefined) {
        const n = (state.perPod.get(pod) ?? 1) - 1;
        if (n > 0) state.perPod.set(pod, n);
        else state.perPod.delete(pod);
      }
      w.close();
    },
  };
  w.on('error', (err) => {
    state.log.debug({ code: (err as NodeJS.ErrnoException).code, dir }, 'watch ended');
    watch.close();
    onError();
  });
  return watch;
}

/** Counts a refusal and logs its kind's first one, with what to raise. */
function refuse(state: InotifyState, kind: string, fields: object, msg: string): 'limit' {
  if (kind === 'kernel') state.refusedByKernel++;
  else state.refusedByBound++;
  if (state.logged.has(kind)) return 'limit';
  state.logged.add(kind);
  state.log.warn(
    { ...fields, pollMs: state.pollMs },
    `${msg}: volumes without a watch are polled every ${state.pollMs} ms instead (logged once; the count of refused watches is in the status)`,
  );
  return 'limit';
}

/**
 * The watch of a volume's own directory for `task` (its events' names to `name`), and a first
 * turn of the task; when the watch is refused, `lost` runs (the task polls instead).
 */
export function startRootWatch(
  env: { inotify: Inotify; scheduler: { mark(task: never): void } },
  task: { podUid: string; target: { dir: string } },
  cb: { name: (name: string | null) => void; lost: () => void },
): Watch | undefined {
  const w = env.inotify.watch(task.target.dir, (_e, name) => cb.name(name), cb.lost, task.podUid);
  const root = typeof w === 'string' ? undefined : w;
  if (root === undefined) cb.lost();
  env.scheduler.mark(task as never);
  return root;
}
