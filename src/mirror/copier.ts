// The copier (docs/design-copies.md#owned-copies-in-slices): where a resident process makes,
// re-makes and removes owned copies, so that no work a pod chooses (a volume of thousands of
// files, dozens of volumes) holds the event loop that answers the runtime. The NRI worker's loop
// must answer every CreateContainer of every pod within the runtime's request timeout (2 s) and
// beat to its supervisor (which kills it after 1.5 s of silence): a copy done in one go held it
// for seconds, the worker was killed, and the runtime created other tenants' containers without
// their env. So the sliced copier runs one job at a time on the worker's own loop, in slices of
// at most SLICE_MS (steps.ts: each job is a generator that yields after each entry measured, each
// 64 KiB chunk, each entry written or removed), the loop turning between slices; a job with a
// deadline (a container's start) checks it before every entry and gives up past it.
//
// Order: jobs run in the order posted, except that a job with a deadline (a container's start, its
// catch-up) goes ahead of the rewrites waiting without one (a Secret's rotation, a replaced
// payload's removal), never ahead of a removal of a copy or a pod, nor of another start: at 250
// pods rotating every 10 s, 25 rewrites a second queue up, and a start behind them ran out of the
// runtime's request timeout (1 of 926 CreateContainers in a 250-pod soak). A rewrite makes the
// copy of the kubelet's current payload whatever ran before it, so running it after a start
// changes nothing it makes; a removal posted before a start (a refused start's copies, chown.ts
// removeCopies) still runs before it. What the copies hold (status, metrics) is measured when the
// queue has run dry, and at most once a second while it has not: a measure reads a link per copy.
//
// What this gives up against the copier thread it replaced (a second V8 isolate: ~11 MiB of the
// worker's anonymous memory, bench/nri-figures.md): a thread stuck in a read in the kernel could be
// terminated and replaced, the loop untouched. Here a read that blocks in the kernel blocks the
// loop: the worker misses its beats and the supervisor replaces it (as it would any hung worker),
// the runtime's requests meanwhile are answered by the next worker. That is acceptable because
// the sources are the kubelet's own files on the node's local disk or tmpfs (a Secret, ConfigMap,
// projected or downward-API volume; an emptyDir is never copied), where a read does not block
// for long unless the node itself is failing. Processes with nothing else to answer (the shim's
// create, tests) use the inline copier: the same jobs, in one go.
import { EnvhookError } from '../errors.ts';
import type { RemoveLater } from './build.ts';
import { copyJobSteps, lateError, startJobSteps, type CopyJob, type CopyResult, type JobEnv, type StartJob } from './copy.ts';
import type { CopyBudgets } from './budget.ts';
import type { CopyPlace } from './layout.ts';
import { removeCopySteps, removePodCopiesSteps, removeTree } from './remove.ts';
import { drain, newSlice, runInSlices, type Steps } from './steps.ts';
import { measureCopiesSteps } from './usage.ts';

/** What the copies under the run directory hold (usage.ts), for status and metrics. */
export interface CopiesHeld {
  bytes: number;
  files: number;
  copies: number;
}

export interface Copier {
  /** A rewrite's or a catch-up's copy of one volume (its budgets: the copier's, budget.ts). */
  copy(job: CopyJob): Promise<CopyResult>;
  /** A container's start: all its volumes' copies, all or none (copy.ts startJobSteps). */
  copyStart(start: StartJob): Promise<CopyResult[]>;
  /** Removes every copy of the pod; true when there was one. */
  removePod(runDir: string, podUid: string): Promise<boolean>;
  /** Removes one volume's copy (and the pod's directory of copies when it was the last), `onlyIf` its `..data` is that; true when there was one. */
  removeCopy(place: CopyPlace, onlyIf?: string): Promise<boolean>;
  /** Other removals as a job in turn (the start's sweep of leftovers, a pod at a time); `runDir`: measured after it. */
  run<T>(steps: () => Steps<T>, runDir?: string): Promise<T>;
  /** Jobs waiting or running, and what the copies under the run directory held after the last job (undefined before the first). */
  stats(): { queued: number; held?: CopiesHeld | undefined };
  close(): Promise<void>;
}

/** The jobs run in one go, each one whole when its promise is made; `budgets` (budget.ts) for every copy. */
export function inlineCopier(budgets?: CopyBudgets): Copier {
  const settle = <T>(steps: () => Steps<T>): Promise<T> => {
    try {
      return Promise.resolve(drain(steps()));
    } catch (err) {
      return Promise.reject(err as Error);
    }
  };
  return {
    copy: (job) => settle(() => copyJobSteps({ ...job, budgets: job.budgets ?? budgets })),
    copyStart: (start) => settle(() => startJobSteps({ ...start, budgets: start.budgets ?? budgets })),
    removePod: (runDir, podUid) => settle(() => removePodCopiesSteps(runDir, podUid)),
    removeCopy: (place, onlyIf) => settle(() => removeCopySteps(place, onlyIf)),
    run: (steps) => settle(steps),
    stats: () => ({ queued: 0 }),
    close: () => Promise.resolve(),
  };
}

/** How a job may be ordered: a start goes ahead of waiting rewrites only (see the head comment). */
type JobKind = 'start' | 'rewrite' | 'removal';

interface Job {
  kind: JobKind;
  steps: (env: JobEnv) => Steps<unknown>;
  /** The run directory the job writes or removes under (measured after it). */
  runDir: string | undefined;
  /** The volume a late job names, and its deadline. */
  volume: string | undefined;
  deadline: bigint | undefined;
  resolve(v: unknown): void;
  reject(err: unknown): void;
}

/** While jobs wait, what the copies hold is measured at most this often. */
const MEASURE_EVERY_MS = 1000;

/** The jobs run on this loop, one at a time, in order, in slices (steps.ts); `budgets` (budget.ts) for every copy. */
export function slicedCopier(budgets?: CopyBudgets): Copier {
  return new SlicedCopier(budgets);
}

class SlicedCopier implements Copier {
  readonly #queue: Job[] = [];
  readonly #budgets: CopyBudgets | undefined;
  readonly #env: JobEnv;
  /** The queue being run, and the job under way in it. */
  #running: Promise<void> | undefined;
  #current: Job | undefined;
  #closed = false;
  #held: CopiesHeld | undefined;
  /** When what the copies hold was last measured (performance.now()), and under which run directory. */
  #measuredAt = -Infinity;
  #measureDir: string | undefined;
  /** One slice across the jobs: a queue of short jobs turns the loop every SLICE_MS too. */
  readonly #slice = newSlice();

  constructor(budgets: CopyBudgets | undefined) {
    this.#budgets = budgets;
    // A replaced payload is removed by a job of its own, in turn, in slices (build.ts retires it).
    const removeLater: RemoveLater = (p, ms) => {
      const timer = setTimeout(() => void this.#post('rewrite', () => removeTree(p), undefined, undefined, undefined).catch(() => {}), ms);
      timer.unref();
    };
    this.#env = { removeLater };
  }

  copy(job: CopyJob): Promise<CopyResult> {
    const j = { ...job, budgets: job.budgets ?? this.#budgets };
    const kind = job.deadline === undefined ? 'rewrite' : 'start';
    return this.#post(kind, (env) => copyJobSteps(j, env), job.place.runDir, job.place.volume, job.deadline);
  }

  copyStart(start: StartJob): Promise<CopyResult[]> {
    const s = { ...start, budgets: start.budgets ?? this.#budgets };
    const place = start.jobs[0]?.place;
    return this.#post('start', (env) => startJobSteps(s, env), place?.runDir, place?.volume, start.deadline);
  }

  removePod(runDir: string, podUid: string): Promise<boolean> {
    return this.#post('removal', () => removePodCopiesSteps(runDir, podUid), runDir, undefined, undefined);
  }

  removeCopy(place: CopyPlace, onlyIf?: string): Promise<boolean> {
    return this.#post('removal', () => removeCopySteps(place, onlyIf), place.runDir, undefined, undefined);
  }

  run<T>(steps: () => Steps<T>, runDir?: string): Promise<T> {
    return this.#post('removal', () => steps(), runDir, undefined, undefined);
  }

  stats(): { queued: number; held?: CopiesHeld | undefined } {
    const stats = { queued: this.#queue.length + (this.#current ? 1 : 0) };
    return this.#held === undefined ? stats : { ...stats, held: this.#held };
  }

  async close(): Promise<void> {
    this.#closed = true;
    const gone = new EnvhookError('owned copies: the copier is closing');
    for (const j of this.#queue.splice(0)) j.reject(gone);
    await this.#running; // the running job stops at its next slice (its own clean-ups done)
  }

  #post<T>(
    kind: JobKind,
    steps: (env: JobEnv) => Steps<T>,
    runDir: string | undefined,
    volume: string | undefined,
    deadline: bigint | undefined,
  ): Promise<T> {
    if (this.#closed) return Promise.reject(new EnvhookError('owned copies: the copier is closed'));
    return new Promise<T>((resolve, reject) => {
      const job = { kind, steps, runDir, volume, deadline, resolve: resolve as (v: unknown) => void, reject };
      this.#queue.splice(kind === 'start' ? this.#startsAt() : this.#queue.length, 0, job);
      this.#running ??= this.#drain();
    });
  }

  /** Where a start goes: after the last waiting job that is not a rewrite. */
  #startsAt(): number {
    let i = this.#queue.length;
    while (i > 0 && this.#queue[i - 1]!.kind === 'rewrite') i--;
    return i;
  }

  /** Runs the queue to its end, a job at a time, from the next microtask on (never inside the caller's own call). */
  async #drain(): Promise<void> {
    await Promise.resolve();
    this.#slice.start = performance.now(); // the caller's own work so far is not the copier's
    for (let job = this.#queue.shift(); job !== undefined; job = this.#queue.shift()) {
      // A job whose deadline passed while it waited is refused at once, not started.
      if (job.deadline !== undefined && process.hrtime.bigint() > job.deadline) {
        job.reject(lateError(job.volume ?? '?'));
        continue;
      }
      this.#current = job;
      await this.#run(job);
      this.#current = undefined;
    }
    this.#running = undefined;
  }

  async #run(job: Job): Promise<void> {
    const stop = () => (this.#closed ? new EnvhookError('owned copies: the copier is closing') : undefined);
    try {
      const value = await runInSlices(job.steps(this.#env), stop, this.#slice);
      await this.#measureIfDue(job.runDir, stop);
      job.resolve(value);
    } catch (err) {
      await this.#measureIfDue(job.runDir, stop);
      job.reject(err);
    }
  }

  /** Measures when the queue has run dry, or a second after the last measure (head comment). */
  async #measureIfDue(runDir: string | undefined, stop: () => Error | undefined): Promise<void> {
    // A replaced payload's removal names no run directory: the one of the jobs before it.
    const dir = runDir ?? this.#measureDir;
    if (dir === undefined) return;
    this.#measureDir = dir;
    if (this.#queue.length > 0 && performance.now() - this.#measuredAt < MEASURE_EVERY_MS) return;
    this.#measuredAt = performance.now();
    await this.#measure(dir, stop);
  }

  /** What the copies hold after a job (usage.ts: a link per copy, plus the payloads not measured before), in slices too. */
  async #measure(runDir: string | undefined, stop: () => Error | undefined): Promise<void> {
    if (runDir === undefined) return;
    try {
      const { bytes, files, copies } = await runInSlices(measureCopiesSteps(runDir), stop, this.#slice);
      this.#held = { bytes, files, copies };
    } catch {
      // kept as it was: the next job measures again
    }
  }
}
