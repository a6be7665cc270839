// The copier (docs/design-copies.md#owned-copies-off-the-event-loop): where a resident process makes,
// re-makes and removes owned copies, so that no work a pod chooses (a volume of thousands of
// files, dozens of volumes) runs on the event loop that answers the runtime. The NRI worker's
// loop must answer every CreateContainer of every pod within the runtime's request timeout (2 s)
// and beat to its supervisor (which kills it after 1.5 s of silence): a copy done in place held
// it for seconds, the worker was killed, and the runtime created other tenants' containers
// without their env. So the copies run in one resident `node:worker_threads` thread, one job at a
// time, in order; the loop posts a job and awaits it.
//
// Why a thread and not a child process: it shares the process's descriptors (a start's job
// reads the data directory the plan opened and checked, by its number) and costs one V8 isolate,
// not a second Node process; a job is a few hundred bytes each way. The thread may not chdir, so
// the confined reads use /proc/self/fd/<n>/<name> paths there (fs/confined.ts withCwdAt).
//
// A job with a deadline (a container's start) gives up by itself past it (copy.ts checks before
// every entry). Should the thread not answer by the deadline and a grace after it (a read stuck
// in the kernel), it is terminated (the job refused, late) and a new one started for the next
// job: the worker itself is never held. Jobs without a deadline (a rewrite, a removal) have a
// long backstop of their own. Processes with nothing else to answer (the shim's create, tests)
// use the inline copier: the same jobs, in the calling thread.
import type { Worker } from 'node:worker_threads';
import { EnvhookError } from '../errors.ts';
import { lateError, runCopyJob, runStartJob, type CopyJob, type CopyResult, type StartJob } from './copy.ts';
import type { CopyBudgets } from './budget.ts';
import type { CopiesHeld, ThreadError, ThreadReply, ThreadRequest } from './copier-messages.ts';
import type { CopyPlace } from './layout.ts';
import { removeCopy, removePodCopies } from './remove.ts';

export interface Copier {
  /** A rewrite's or a catch-up's copy of one volume (its budgets: the copier's, budget.ts). */
  copy(job: CopyJob): Promise<CopyResult>;
  /** A container's start: all its volumes' copies, all or none (copy.ts runStartJob). */
  copyStart(start: StartJob): Promise<CopyResult[]>;
  /** Removes every copy of the pod; true when there was one. */
  removePod(runDir: string, podUid: string): Promise<boolean>;
  /** Removes one volume's copy (and the pod's directory of copies when it was the last), `onlyIf` its `..data` is that; true when there was one. */
  removeCopy(place: CopyPlace, onlyIf?: string): Promise<boolean>;
  /**
   * Jobs waiting or running, threads replaced (stopped past a backstop, or ended), and what the
   * copies under the run directory held after the last job (undefined before the first).
   */
  stats(): { queued: number; restarts: number; held?: CopiesHeld | undefined };
  close(): Promise<void>;
}

/** The jobs run in the calling thread, each one whole when its promise is made; `budgets` (budget.ts) for every copy. */
export function inlineCopier(budgets?: CopyBudgets): Copier {
  const settle = <T>(fn: () => T): Promise<T> => {
    try {
      return Promise.resolve(fn());
    } catch (err) {
      return Promise.reject(err as Error);
    }
  };
  return {
    copy: (job) => settle(() => runCopyJob({ ...job, budgets: job.budgets ?? budgets })),
    copyStart: (start) => settle(() => runStartJob({ ...start, budgets: start.budgets ?? budgets })),
    removePod: (runDir, podUid) => settle(() => removePodCopies(runDir, podUid)),
    removeCopy: (place, onlyIf) => settle(() => removeCopy(place, onlyIf)),
    stats: () => ({ queued: 0, restarts: 0 }),
    close: () => Promise.resolve(),
  };
}

export interface ThreadCopierOptions {
  /** A job with a deadline that has not answered this long after it is stopped with its thread. */
  graceMs?: number;
  /** A job without a deadline that has not answered after this long is stopped with its thread. */
  backstopMs?: number;
  /** Start the thread now, not at the first job (whose deadline would pay for it). */
  startNow?: boolean;
  /** The budgets of every copy (budget.ts); default: DEFAULT_BUDGETS. */
  budgets?: CopyBudgets | undefined;
}

const GRACE_MS = 150;
const BACKSTOP_MS = 120_000;

// Set by esbuild's `define` in the bundles (scripts/build.mjs): the thread's own bundle, as text.
declare const __ENVHOOK_COPIER_THREAD__: string | undefined;

interface Pending {
  request: ThreadRequest;
  /** The volume a late job names. */
  volume: string | undefined;
  deadline: bigint | undefined;
  resolve(v: unknown): void;
  reject(err: unknown): void;
}

export function threadCopier(opts: ThreadCopierOptions = {}): Copier {
  const copier = new ThreadCopier(opts.graceMs ?? GRACE_MS, opts.backstopMs ?? BACKSTOP_MS, opts.budgets);
  if (opts.startNow) copier.start();
  return copier;
}

class ThreadCopier implements Copier {
  readonly #graceMs: number;
  readonly #backstopMs: number;
  readonly #queue: Pending[] = [];
  #running: Pending | undefined;
  #thread: Worker | undefined;
  #timer: NodeJS.Timeout | undefined;
  #ids = 0;
  #restarts = 0;
  #closed = false;
  #held: CopiesHeld | undefined;
  readonly #budgets: CopyBudgets | undefined;

  constructor(graceMs: number, backstopMs: number, budgets: CopyBudgets | undefined) {
    this.#graceMs = graceMs;
    this.#backstopMs = backstopMs;
    this.#budgets = budgets;
  }

  copy(job: CopyJob): Promise<CopyResult> {
    const request = { id: ++this.#ids, kind: 'copy' as const, job: { ...job, budgets: job.budgets ?? this.#budgets } };
    return this.#post(request, job.place.volume, job.deadline) as Promise<CopyResult>;
  }

  copyStart(start: StartJob): Promise<CopyResult[]> {
    const request = { id: ++this.#ids, kind: 'copy-start' as const, start: { ...start, budgets: start.budgets ?? this.#budgets } };
    return this.#post(request, start.jobs[0]?.place.volume, start.deadline) as Promise<CopyResult[]>;
  }

  removePod(runDir: string, podUid: string): Promise<boolean> {
    return this.#post({ id: ++this.#ids, kind: 'remove-pod', runDir, podUid }, undefined, undefined) as Promise<boolean>;
  }

  removeCopy(place: CopyPlace, onlyIf?: string): Promise<boolean> {
    return this.#post({ id: ++this.#ids, kind: 'remove-copy', place, onlyIf }, undefined, undefined) as Promise<boolean>;
  }

  start(): void {
    this.#thread ??= this.#start();
  }

  stats(): { queued: number; restarts: number; held?: CopiesHeld | undefined } {
    const stats = { queued: this.#queue.length + (this.#running ? 1 : 0), restarts: this.#restarts };
    return this.#held === undefined ? stats : { ...stats, held: this.#held };
  }

  async close(): Promise<void> {
    this.#closed = true;
    const gone = new EnvhookError('owned copies: the copier is closing');
    for (const p of this.#queue.splice(0)) p.reject(gone);
    clearTimeout(this.#timer);
    const thread = this.#thread;
    this.#thread = undefined;
    if (thread) await thread.terminate();
    this.#running?.reject(gone);
    this.#running = undefined;
  }

  #post(request: ThreadRequest, volume: string | undefined, deadline: bigint | undefined): Promise<unknown> {
    if (this.#closed) return Promise.reject(new EnvhookError('owned copies: the copier is closed'));
    return new Promise((resolve, reject) => {
      // A job whose deadline passed while it waited is refused at once, not started.
      this.#queue.push({ request, volume, deadline, resolve, reject });
      this.#next();
    });
  }

  #next(): void {
    if (this.#running !== undefined || this.#closed) return;
    const p = this.#queue.shift();
    if (p === undefined) return;
    if (p.deadline !== undefined && process.hrtime.bigint() > p.deadline) {
      p.reject(lateError(p.volume ?? '?'));
      return this.#next();
    }
    this.#running = p;
    const thread = (this.#thread ??= this.#start());
    const ms = p.deadline === undefined ? this.#backstopMs : Number(p.deadline - process.hrtime.bigint()) / 1e6 + this.#graceMs;
    this.#timer = setTimeout(() => void this.#stop(p), Math.max(0, ms));
    thread.postMessage(p.request);
  }

  #start(): Worker {
    const { Worker } = process.getBuiltinModule('node:worker_threads');
    const thread =
      typeof __ENVHOOK_COPIER_THREAD__ === 'string'
        ? new Worker(__ENVHOOK_COPIER_THREAD__, { eval: true })
        : // From the sources (tests): the thread's file beside this one, without the parent's loaders.
          new Worker(new URL('./copier-thread.ts', import.meta.url), { execArgv: [] });
    thread.unref();
    thread.on('message', (r: ThreadReply) => this.#reply(r));
    thread.on('error', () => {}); // its end follows: 'exit'
    thread.on('exit', () => {
      if (this.#thread !== thread) return;
      this.#thread = undefined;
      this.#restarts++;
      const p = this.#running;
      if (p === undefined) return;
      this.#finish(p);
      this.#cleanUpAfter(p.request);
      p.reject(new EnvhookError(`owned copies: the copier thread ended${p.volume ? ` while copying volume "${p.volume}"` : ''}`));
      this.#next();
    });
    return thread;
  }

  /** The first job of the next thread: what the stopped one left half-written in the copies of `request` (remove.ts cleanUpCopies). */
  #cleanUpAfter(request: ThreadRequest): void {
    const places =
      request.kind === 'copy' ? [request.job.place] : request.kind === 'copy-start' ? request.start.jobs.map((j) => j.place) : [];
    if (places.length === 0) return;
    const ignore = () => {}; // a clean-up that fails leaves the leftovers to the next swap's rule (build.ts)
    this.#queue.unshift({
      request: { id: ++this.#ids, kind: 'clean-up', places },
      volume: undefined,
      deadline: undefined,
      resolve: ignore,
      reject: ignore,
    });
  }

  #reply(r: ThreadReply): void {
    if (r.held !== undefined) this.#held = r.held;
    const p = this.#running;
    if (p === undefined || p.request.id !== r.id) return;
    this.#finish(p);
    if (r.ok) p.resolve(r.value);
    else p.reject(fromThread(r.error));
    this.#next();
  }

  #finish(p: Pending): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#running === p) this.#running = undefined;
  }

  /** Past the job's backstop: its thread stopped (waited for: the job may read a descriptor its caller closes after), the job refused. */
  async #stop(p: Pending): Promise<void> {
    if (this.#running !== p) return;
    const thread = this.#thread;
    this.#thread = undefined;
    this.#restarts++;
    if (thread) await thread.terminate();
    this.#finish(p);
    this.#cleanUpAfter(p.request);
    const what = p.volume !== undefined ? `volume "${p.volume}"` : 'a removal of owned copies';
    p.reject(
      p.deadline !== undefined
        ? lateError(p.volume ?? '?')
        : new EnvhookError(`owned copies: ${what} did not finish in ${this.#backstopMs / 1000} s: stopped`),
    );
    this.#next();
  }
}

/** The thread's error as this thread's: ours as an EnvhookError, a foreign one as an Error with its code, call and path. */
function fromThread(e: ThreadError): Error {
  if (e.ours) return new EnvhookError(e.message);
  const err = new Error(e.code ?? e.name) as NodeJS.ErrnoException;
  err.name = e.name;
  if (e.code !== undefined) err.code = e.code;
  if (e.syscall !== undefined) err.syscall = e.syscall;
  if (e.path !== undefined) err.path = e.path;
  return err;
}
