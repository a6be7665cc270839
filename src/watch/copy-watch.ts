// One volume read through envhook's owned copy (src/mirror/): the kubelet's volume directory is
// watched, and each swap of its `..data` (the kubelet's rewrite) is followed at once by a new
// copy: the payload read and checked, written with its owners and swapped in, by the copier
// (mirror/copier.ts: the NRI worker's thread, so that a volume of thousands of files never holds
// the loop that answers the runtime). One copy of a volume at a time: a swap seen while one runs
// is copied after it. Nothing of the kubelet's is changed. The container never sees a file before it
// is owned, so there is no race to win here; the delay from the kubelet's swap to the copy's is
// only how long the copy takes (measured: `latency`). Polls, the minute's pass and a lost watch
// (inotify limit) only compare the kubelet's `..data` target with the one copied last, and copy
// when it moved. The kubelet's directory removed (the pod's volumes torn down; `rm -r` takes
// `..data` first) ends the watch at the directory's own event, not at the next pass. A volume on a
// tmpfs of its own (secrets, projected tokens) is unmounted before its directory goes: the kernel
// ends the watch with the mount (IN_UNMOUNT, IN_IGNORED) and would say nothing of the removal that
// follows, so the watch is set again on the mount point then (a directory of another device and
// inode) and sees it. That removal is often the only word of a pod's end: containerd 2.1 sends no
// StopPodSandbox for the sandboxes it restored after its own restart. A failure
// (a hard link planted in the volume, the run directory full) is logged once per distinct
// message and counted; the copy keeps the last good payload.
import fs from 'node:fs';
import path from 'node:path';
import { describeError, EnvhookError } from '../errors.ts';
import type { Logger } from '../log.ts';
import { DATA_LINK } from '../fs/datadir.ts';
import type { Copier } from '../mirror/copier.ts';
import { copyDir, type CopyPlace } from '../mirror/layout.ts';
import { startRootWatch, type Inotify, type Watch } from './inotify.ts';
import type { PassTarget } from './pass.ts';
import type { Scheduler, Task } from './scheduler.ts';

export interface CopyEnv {
  log: Logger;
  scheduler: Scheduler;
  inotify: Inotify;
  copier: Copier;
  /** The kubelet's volume directory is gone (the pod's volumes were torn down). */
  onGone(v: CopyWatch): void;
  /** A copy was swapped in: seconds from the kubelet's swap (its `..data` ctime) to the copy's. */
  copied(seconds: number): void;
  failed(): void;
}

const MAX_WARNINGS = 8;

export class CopyWatch implements Task {
  readonly podUid: string;
  target: PassTarget;
  readonly place: CopyPlace;
  degraded = false;
  readonly #env: CopyEnv;
  #root: Watch | undefined;
  /** The device and inode of the directory the root watch is on. */
  #watchedId: string | undefined;
  #closed = false;
  #copied: string | undefined; // the kubelet's timestamped directory copied last
  #force = false;
  /** A copy is being made; `#again`: the kubelet moved on meanwhile, another one follows. */
  #busy = false;
  #again = false;
  #warned = new Set<string>();

  constructor(podUid: string, target: PassTarget, place: CopyPlace, env: CopyEnv) {
    this.podUid = podUid;
    this.target = target;
    this.place = place;
    this.#env = env;
  }

  start(): void {
    this.#watchedId = dirId(this.target.dir);
    this.#root = startRootWatch(this.#env, this, { name: (n) => this.#onRoot(n), lost: () => this.#degrade() });
  }

  /** New owners: the copy is made again. */
  update(target: PassTarget): void {
    // The same owners (another container of the pod started): the copy holds them already.
    if (ownersKey(target) === ownersKey(this.target)) return;
    this.target = target;
    this.#force = true;
    this.#env.scheduler.mark(this);
  }

  poll(): void {
    this.#env.scheduler.mark(this);
  }

  get watches(): number {
    return this.#root ? 1 : 0;
  }

  close(): void {
    this.#closed = true;
    this.#env.scheduler.cancel(this);
    this.#root?.close();
    this.#root = undefined;
  }

  run(): void {
    if (this.#closed || this.#goneAway() || this.#rearmed()) return;
    this.#sync();
  }

  /**
   * The directory is another one than the watch is on (its tmpfs unmounted: the mount point below
   * shows; or removed and made again): the kernel's watch ended with the old one, so it is set
   * again here, and the watch's first turn (startRootWatch) copies or finds it gone.
   */
  #rearmed(): boolean {
    if (this.#root === undefined) return false; // polled: every pass looks anyway
    const id = dirId(this.target.dir);
    if (id === undefined || id === this.#watchedId) return false;
    this.#root.close();
    this.#root = undefined;
    this.#env.log.debug(
      { podUid: this.podUid, volume: this.place.volume },
      'owned copy: volume directory replaced (unmounted): watched again',
    );
    this.start();
    return true;
  }

  /** The kubelet's volume directory is gone: the watch ends and says so. */
  #goneAway(): boolean {
    if (fs.existsSync(this.target.dir)) return false;
    this.close();
    this.#env.onGone(this);
    return true;
  }

  #onRoot(name: string | null): void {
    if (this.#closed) return;
    if (name === DATA_LINK) {
      this.#sync(); // now: the kubelet has swapped, the container still sees the old copy
      return;
    }
    // The kernel's events for the directory itself (IN_DELETE_SELF, IN_IGNORED: libuv names them
    // by its base name) and a queue overflow (no name): a run checks whether it is gone.
    if (name === null || name === path.basename(this.target.dir)) this.#env.scheduler.mark(this);
  }

  #degrade(): void {
    this.#root?.close();
    this.#root = undefined;
    this.degraded = true;
    this.#env.scheduler.mark(this);
  }

  /** A new copy when the kubelet's `..data` moved since the last one (or one is due anyway). */
  #sync(): void {
    let target: string;
    let swappedMs: number;
    try {
      target = fs.readlinkSync(`${this.target.dir}/${DATA_LINK}`);
      swappedMs = fs.lstatSync(`${this.target.dir}/${DATA_LINK}`).ctimeMs;
    } catch {
      return; // between a kubelet's steps, or the volume is going: the next event or pass decides
    }
    // A watch that starts (after CreateContainer, a restart) takes what the copy holds as copied.
    this.#copied ??= this.#inCopy();
    if (!this.#force && target === this.#copied) return;
    if (this.#busy) {
      this.#again = true;
      return;
    }
    this.#busy = true;
    void this.#copy(swappedMs);
  }

  async #copy(swappedMs: number): Promise<void> {
    const start = process.hrtime.bigint();
    try {
      const r = await this.#env.copier.copy({
        place: this.place,
        kubeletDir: this.target.dir,
        owners: { defaultOwner: this.target.defaultOwner, items: this.target.items },
      });
      this.#copied = r.source;
      this.#force = false;
      this.#env.copied(Math.max(0, Date.now() - swappedMs) / 1000);
      const ms = Number(process.hrtime.bigint() - start) / 1e6;
      this.#env.log.debug({ podUid: this.podUid, volume: this.place.volume, files: r.files, bytes: r.bytes, ms }, 'owned copy updated');
    } catch (err) {
      // The kubelet swapped again while we read (its event follows), or the watch closed meanwhile.
      if (isGoneMeanwhile(err) || this.#closed) {
        this.#env.log.debug(
          { podUid: this.podUid, volume: this.place.volume, closed: this.#closed },
          'owned copy: the kubelet moved on meanwhile',
        );
      } else {
        this.#env.failed();
        this.#warn(err);
      }
    } finally {
      this.#busy = false;
    }
    if (this.#again && !this.#closed) {
      this.#again = false;
      this.#sync();
    }
  }

  /** The kubelet's directory the copy holds (the copy's own takes its name: mirror/build.ts), if it is there. */
  #inCopy(): string | undefined {
    try {
      return fs.readlinkSync(`${copyDir(this.place)}/${DATA_LINK}`);
    } catch {
      return undefined;
    }
  }

  #warn(err: unknown): void {
    const message = err instanceof EnvhookError ? err.message : describeError(err);
    if (this.#warned.has(message)) return;
    if (this.#warned.size < MAX_WARNINGS) this.#warned.add(message);
    this.#env.log.warn({ podUid: this.podUid, volume: this.place.volume, err }, `owned copy not updated: ${message}`);
  }
}

/** `dev:ino` of a directory, or undefined when it is not there. */
function dirId(dir: string): string | undefined {
  try {
    const st = fs.statSync(dir);
    return `${st.dev}:${st.ino}`;
  } catch {
    return undefined;
  }
}

function ownersKey(t: PassTarget): string {
  return JSON.stringify([t.dir, t.defaultOwner, [...t.items]]);
}

/** The kubelet removed the directory being read (a newer rewrite): not a failure of the volume. */
function isGoneMeanwhile(err: unknown): boolean {
  return err instanceof EnvhookError && /(not found|went away while being copied)$/.test(err.message);
}
