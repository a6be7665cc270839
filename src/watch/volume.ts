// One watched atomic-write volume. The kubelet's writer (scripts/atomic-writer.ts shows its
// order) makes `..<timestamp>.<random>`, writes the files into it, renames `..data_tmp` onto
// `..data`, then removes the old directory. We watch the volume directory; the moment a new
// timestamped directory appears it is opened, watched (pending.ts) and walked, and each file
// created in it afterwards is owned inside the event's callback: before `..data` points at it,
// unless the kubelet swaps faster than this process is scheduled. The `..data` rename runs a
// pass over what it points at at once, with the start's code: the safety net for whatever that
// race was lost on. Those three run inside the event's callback (no queue: the kubelet does not
// wait); everything else (polls, a new subdirectory's walk, the minute's pass) runs as one
// scheduler task, coalesced, one per loop turn. State is bounded: the new directories
// (pending.ts) and the names kept here.
import fs from 'node:fs';
import { describeError, EnvhookError } from '../errors.ts';
import type { Logger } from '../log.ts';
import { DATA_LINK } from '../fs/datadir.ts';
import { startRootWatch, type Inotify, type Watch } from './inotify.ts';
import { PendingDirs } from './pending.ts';
import {
  isKubeletTimestamped,
  openPending,
  ownCurrent,
  ownOpenPending,
  ownPending,
  ownPendingEntry,
  type CurrentPass,
  type OpenPending,
  type PassTarget,
} from './pass.ts';
import { ConfinedError } from '../fs/confined.ts';
import type { Scheduler, Task } from './scheduler.ts';

export interface VolumeEnv {
  log: Logger;
  scheduler: Scheduler;
  inotify: Inotify;
  /** New timestamped directories watched at once (older ones are dropped first). */
  maxPending: number;
  /** Own new directories before the swap (default); false: only after it (bench/watch.ts's baseline). */
  preSwap: boolean;
  /** The volume directory is gone (the pod's volumes were torn down). */
  onGone(v: VolumeWatch): void;
  /**
   * Files whose owner this watch changed: 'before' `..data` pointed at them, or 'after' (by the
   * pass after the swap, or through the new directory's watch once the kubelet had swapped
   * already): each of those a file a reader could find root's.
   */
  owned(pass: 'before' | 'after', files: number): void;
}

const MAX_REMEMBERED = 8; // candidate names, retired names and distinct warnings kept

export class VolumeWatch implements Task {
  readonly podUid: string;
  target: PassTarget;
  /** No watch could be set: polled by the registry. */
  degraded = false;
  readonly #env: VolumeEnv;
  #root: Watch | undefined;
  #closed = false;
  #full = true; // a pass over what ..data points at is due
  #current: string | undefined;
  #candidates = new Set<string>(); // polling mode: names of new timestamped entries a scan found
  readonly #pending: PendingDirs;
  #unwatched = new Set<string>(); // polling mode: new directories due a pass without a watch
  #retired: string[] = []; // former ..data targets: being removed, never adopted again
  #warned = new Set<string>();

  constructor(podUid: string, target: PassTarget, env: VolumeEnv) {
    this.podUid = podUid;
    this.target = target;
    this.#env = env;
    this.#pending = new PendingDirs(target.dir, {
      inotify: env.inotify,
      pod: podUid,
      max: env.maxPending,
      open: (name) => openPending(this.target, name),
      onEntry: (name, dir, rel) => this.#ownEntry(name, dir, rel),
      mark: () => env.scheduler.mark(this),
      onLimit: () => this.#degrade(),
    });
  }

  start(): void {
    this.#root = startRootWatch(this.#env, this, { name: (n) => this.#onRoot(n), lost: () => this.#degrade() });
  }

  /** New owners (the pod was added again): a full pass is due. */
  update(target: PassTarget): void {
    this.target = target;
    this.poll();
  }

  /** A pass over ..data and every new directory, without waiting for an event. */
  poll(): void {
    this.#full = true;
    if (this.degraded) this.#scanRoot();
    this.#env.scheduler.mark(this);
  }

  get watches(): number {
    return (this.#root ? 1 : 0) + this.#pending.watches;
  }

  close(): void {
    this.#closed = true;
    this.#env.scheduler.cancel(this);
    this.#root?.close();
    this.#root = undefined;
    this.#pending.close();
  }

  #onRoot(name: string | null): void {
    if (this.#closed) return;
    if (name === DATA_LINK) {
      this.#guard(() => this.#ownCurrent()); // now: the reader may already be opening the new files
      return;
    }
    if (name !== null && isKubeletTimestamped(name)) {
      if (this.#env.preSwap) this.#guard(() => this.#adopt(name)); // now: the kubelet is writing into it
      return;
    }
    if (name === null) this.#full = true; // an event the kernel did not name (its queue overflowed)
    this.#env.scheduler.mark(this);
  }

  #degrade(): void {
    this.#root?.close();
    this.#root = undefined;
    this.#pending.close();
    this.degraded = true;
    this.#full = true;
    this.#env.scheduler.mark(this);
  }

  run(): void {
    if (this.#closed) return;
    if (!fs.existsSync(this.target.dir)) {
      this.close();
      this.#env.onGone(this);
      return;
    }
    if (this.#full) this.#guard(() => this.#ownCurrent());
    for (const name of this.#candidates) this.#guard(() => this.#adopt(name));
    this.#candidates.clear();
    let due: string[] = [];
    this.#guard(() => (due = this.#pending.drain()));
    for (const name of [...due, ...this.#unwatched]) this.#guard(() => this.#ownPending(name));
    this.#unwatched.clear();
    this.#pending.prune();
  }

  #guard(step: () => void): void {
    try {
      step();
    } catch (err) {
      this.#warn(err);
    }
  }

  #ownCurrent(): void {
    this.#full = false;
    const start = process.hrtime.bigint();
    const stats = { files: 0, changed: 0 };
    let r: CurrentPass;
    try {
      r = ownCurrent(this.target, stats);
    } catch (err) {
      // ..data was read just before a rewrite removed its directory: the rename's own event
      // brings the next pass. Anything else is the volume's fault and is logged.
      if (isConfinedNotFound(err)) return;
      throw err;
    } finally {
      this.#counted('after', stats);
    }
    if (r.timestamped !== this.#current) {
      if (this.#current !== undefined) this.#retire(this.#current);
      this.#current = r.timestamped;
    }
    // Published: the kubelet never touches it again, so its watches end here.
    if (r.timestamped !== undefined) this.#pending.unwatch(r.timestamped);
    this.#log('current', r, start);
  }

  #adopt(name: string): void {
    if (name === this.#current || this.#retired.includes(name) || this.#pending.has(name)) return;
    if (this.degraded) return void this.#unwatched.add(name);
    const start = process.hrtime.bigint();
    const adopted = this.#pending.adopt(name);
    if (adopted === 'limit') this.#unwatched.add(name);
    if (adopted !== 'adopted') return;
    // Files the kubelet made before the watch was set: owned now; later ones by their events.
    const stats = { files: 0, changed: 0 };
    try {
      this.#log('pending', ownOpenPending(this.target, this.#pending.get(name)!, stats), start);
    } finally {
      this.#counted(this.#swapped(name), stats);
    }
  }

  /** One entry of a new directory, as its event comes: nothing queued, nothing thrown. */
  #ownEntry(name: string, dir: OpenPending, rel: string): 'file' | 'directory' | undefined {
    const stats = { files: 0, changed: 0 };
    try {
      return ownPendingEntry(this.target, dir, rel, stats);
    } catch (err) {
      this.#warn(err);
      return undefined;
    } finally {
      this.#counted(this.#swapped(name), stats);
    }
  }

  #ownPending(name: string): void {
    const start = process.hrtime.bigint();
    const held = this.#pending.get(name);
    const stats = { files: 0, changed: 0 };
    try {
      const done = held ? ownOpenPending(this.target, held, stats) : ownPending(this.target, name, stats);
      if (done === undefined) return this.#pending.unwatch(name); // gone: the old directory, or never a real one
      this.#log('pending', done, start);
    } finally {
      this.#counted(this.#swapped(name), stats);
    }
  }

  #counted(pass: 'before' | 'after' | (() => 'before' | 'after'), stats: { changed: number }): void {
    if (stats.changed > 0) this.#env.owned(typeof pass === 'function' ? pass() : pass, stats.changed);
  }

  /** Whether `..data` points at new directory `name` already: read only when a file changed owner. */
  #swapped(name: string): () => 'before' | 'after' {
    return () => {
      try {
        return fs.readlinkSync(`${this.target.dir}/${DATA_LINK}`) === name ? 'after' : 'before';
      } catch {
        return 'before'; // no ..data at all: nothing published yet
      }
    };
  }

  #retire(name: string): void {
    this.#retired.push(name);
    if (this.#retired.length > MAX_REMEMBERED) this.#retired.shift();
  }

  /** Polling mode: every new timestamped directory in the volume gets a pass. */
  #scanRoot(): void {
    let names: string[];
    try {
      names = fs.readdirSync(this.target.dir);
    } catch {
      return;
    }
    for (const name of names) if (isKubeletTimestamped(name) && this.#candidates.size < MAX_REMEMBERED) this.#candidates.add(name);
  }

  #log(phase: 'current' | 'pending', stats: { files: number; changed: number }, start: bigint): void {
    const ms = Number(process.hrtime.bigint() - start) / 1e6;
    this.#env.log.debug({ podUid: this.podUid, volume: this.target.volume, phase, ...stats, ms }, 'watched volume owners');
  }

  /** Each distinct failure of a volume is logged once; the watch goes on. */
  #warn(err: unknown): void {
    const message = err instanceof EnvhookError ? err.message : describeError(err);
    if (this.#warned.has(message)) return;
    if (this.#warned.size < MAX_REMEMBERED) this.#warned.add(message);
    this.#env.log.warn({ podUid: this.podUid, volume: this.target.volume, err }, `watched volume owners: ${message}`);
  }
}

function isConfinedNotFound(err: unknown): boolean {
  return err instanceof EnvhookError && err.cause instanceof ConfinedError && err.cause.notFound;
}
