// The new timestamped directories of one volume that the kubelet is writing and has not yet
// published through `..data`. Each is held open (its files are reached through that descriptor
// only) and watched, with its subdirectories for nested item paths, and every entry an event
// names is handed to the volume at once, inside the event's callback: the file gets its owner
// while the kubelet is still writing the next one, with no queue in between (the kubelet swaps
// `..data` microseconds after its last file). At most `max` are held at once (the oldest is
// dropped first), each with at most MAX_SUBDIRS subdirectories: stale directories a failed
// write left behind cannot pile up watches or descriptors.
import fs from 'node:fs';
import path from 'node:path';
import type { Inotify, Watch } from './inotify.ts';
import type { OpenPending } from './pass.ts';

const MAX_SUBDIRS = 32;

export interface PendingEnv {
  inotify: Inotify;
  /** The pod the watches count against (inotify.ts's per-pod bound). */
  pod: string;
  max: number;
  /** Opens new directory `name` inside the volume's confinement, or undefined. */
  open(name: string): OpenPending | undefined;
  /** Entry `rel` of new directory `name` was created or changed: own it now. */
  onEntry(name: string, dir: OpenPending, rel: string): 'file' | 'directory' | undefined;
  /** New directory `name` wants a whole pass (a subdirectory appeared, or an event without a name). */
  mark(): void;
  /** No watch could be set (a limit): the volume falls back to polling. */
  onLimit(): void;
}

interface Held {
  dir: OpenPending;
  watches: Map<string, Watch>; // '' is the directory itself
}

export class PendingDirs {
  readonly #dir: string;
  readonly #env: PendingEnv;
  #held = new Map<string, Held>();
  #dirty = new Set<string>(); // due a whole pass

  constructor(volumeDir: string, env: PendingEnv) {
    this.#dir = volumeDir;
    this.#env = env;
  }

  get watches(): number {
    let n = 0;
    for (const h of this.#held.values()) n += h.watches.size;
    return n;
  }

  has(name: string): boolean {
    return this.#held.has(name);
  }

  /** The open directory of an adopted name. */
  get(name: string): OpenPending | undefined {
    return this.#held.get(name)?.dir;
  }

  /** Opens and watches new directory `name`: 'gone' (not there, not the kubelet's) or 'limit' (no watch). */
  adopt(name: string): 'adopted' | 'gone' | 'limit' {
    const dir = this.#env.open(name);
    if (dir === undefined) return 'gone'; // and nothing held is dropped for it
    while (this.#held.size >= this.#env.max) this.unwatch(this.#held.keys().next().value!);
    this.#held.set(name, { dir, watches: new Map() });
    // Watch first, then the caller's pass: a file made between the two is seen by one or the other.
    if (!this.#watch(name, '')) {
      this.unwatch(name);
      return 'limit';
    }
    this.#watchSubdirs(name, '');
    return 'adopted';
  }

  /** The directories due a whole pass since the last drain. */
  drain(): string[] {
    const due = [...this.#dirty];
    this.#dirty.clear();
    return due;
  }

  unwatch(name: string): void {
    const h = this.#held.get(name);
    if (h === undefined) return;
    for (const w of h.watches.values()) w.close();
    fs.closeSync(h.dir.fd);
    this.#held.delete(name);
    this.#dirty.delete(name);
  }

  close(): void {
    for (const name of [...this.#held.keys()]) this.unwatch(name);
  }

  /** Lets go of the directories removed since they were adopted (their events may have been missed). */
  prune(): void {
    for (const [name, h] of [...this.#held]) if (isRemoved(h.dir.fd)) this.unwatch(name);
  }

  /** Watches the existing subdirectories below `rel` (getdents types through the descriptor: no symlink descended). */
  #watchSubdirs(name: string, rel: string): void {
    const h = this.#held.get(name);
    if (h === undefined) return;
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(`/proc/self/fd/${h.dir.fd}/${rel}`, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) if (e.isDirectory()) this.#watchSubdir(name, path.join(rel, e.name));
  }

  #watchSubdir(name: string, rel: string): void {
    const h = this.#held.get(name);
    if (!h || h.watches.has(rel) || h.watches.size > MAX_SUBDIRS || !this.#watch(name, rel)) return;
    this.#watchSubdirs(name, rel);
  }

  #watch(name: string, rel: string): boolean {
    // Only 'rename' (created, moved, removed): a file is owned at its creation, and the
    // kubelet's writes and chmods after it ('change') change no owner. Skipping them keeps this
    // process ahead of the writer instead of behind its queue of events.
    const listener = (event: string, file: string | null) => {
      if (event === 'rename') this.#onEvent(name, rel, file);
    };
    const w = this.#env.inotify.watch(path.join(this.#dir, name, rel), listener, () => this.unwatch(name), this.#env.pod);
    if (w === 'limit') this.#env.onLimit();
    if (typeof w === 'string') return false;
    this.#held.get(name)?.watches.set(rel, w);
    return true;
  }

  #onEvent(name: string, rel: string, file: string | null): void {
    const h = this.#held.get(name);
    if (h === undefined) return;
    if (file !== null) {
      const entry = path.join(rel, file);
      const kind = this.#env.onEntry(name, h.dir, entry);
      if (kind === 'file') return;
      if (kind === undefined) {
        // Nothing to own: an entry gone or not a file, or the directory itself removed (a failed
        // write the kubelet cleaned up; its watch reports its own name): then it is let go.
        if (isRemoved(h.dir.fd)) this.unwatch(name);
        return;
      }
      // A new subdirectory: watched now, then walked whole (files made before its watch).
      this.#watchSubdir(name, entry);
    }
    // (An event the kernel did not name: its queue overflowed. A whole pass too.)
    this.#dirty.add(name);
    this.#env.mark();
  }
}

/** A directory removed while held open has no links left. */
function isRemoved(fd: number): boolean {
  try {
    return fs.fstatSync(fd).nlink === 0;
  } catch {
    return true;
  }
}
