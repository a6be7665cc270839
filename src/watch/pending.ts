// The new timestamped directories of one volume that the kubelet is writing and has not yet
// published through `..data`: each is watched (with its subdirectories, for nested item paths)
// so that its files can be owned as they appear. At most `max` are watched at once (the
// oldest is dropped first), each with at most MAX_SUBDIRS subdirectories: stale directories a
// failed write left behind cannot pile up watches.
import fs from 'node:fs';
import path from 'node:path';
import type { Inotify, Watch } from './inotify.ts';

const MAX_SUBDIRS = 32;

export interface PendingEnv {
  inotify: Inotify;
  max: number;
  /** An event came: the volume wants a pass. */
  mark(): void;
  /** The inotify limit was reached: the volume falls back to polling. */
  onLimit(): void;
}

export class PendingDirs {
  readonly #dir: string;
  readonly #env: PendingEnv;
  #watched = new Map<string, Map<string, Watch>>(); // new dir → its watched dirs ('' is itself)
  #dirty = new Set<string>(); // with events since their last pass
  #created: [string, string][] = []; // [new dir, relative name] created there: maybe a subdirectory

  constructor(volumeDir: string, env: PendingEnv) {
    this.#dir = volumeDir;
    this.#env = env;
  }

  get watches(): number {
    let n = 0;
    for (const dirs of this.#watched.values()) n += dirs.size;
    return n;
  }

  has(name: string): boolean {
    return this.#watched.has(name);
  }

  /** Watches new directory `name`; false when it cannot be watched (gone, or the limit). */
  adopt(name: string): boolean {
    while (this.#watched.size >= this.#env.max) this.unwatch(this.#watched.keys().next().value!);
    this.#watched.set(name, new Map());
    // Watch first, then pass: a file made between the two is seen by one or the other.
    if (!this.#watch(name, '')) {
      this.unwatch(name);
      return false;
    }
    this.#dirty.add(name);
    this.#watchSubdirs(name, path.join(this.#dir, name), '');
    return true;
  }

  /** The directories due a pass (watches for new subdirectories are set first). */
  drain(): string[] {
    for (const [name, rel] of this.#created) {
      if (fs.lstatSync(path.join(this.#dir, name, rel), { throwIfNoEntry: false })?.isDirectory()) this.#watchSubdir(name, rel);
    }
    this.#created = [];
    const due = [...this.#dirty];
    this.#dirty.clear();
    return due;
  }

  unwatch(name: string): void {
    const dirs = this.#watched.get(name);
    if (dirs) for (const w of dirs.values()) w.close();
    this.#watched.delete(name);
    this.#dirty.delete(name);
    this.#created = this.#created.filter(([n]) => n !== name);
  }

  close(): void {
    for (const name of [...this.#watched.keys()]) this.unwatch(name);
  }

  /** Walks an adopted directory's existing subdirectories once (getdents types: no symlink descended). */
  #watchSubdirs(name: string, abs: string, rel: string): void {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(abs, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) if (e.isDirectory()) this.#watchSubdir(name, path.join(rel, e.name));
  }

  #watchSubdir(name: string, rel: string): void {
    const dirs = this.#watched.get(name);
    if (!dirs || dirs.has(rel) || dirs.size > MAX_SUBDIRS || !this.#watch(name, rel)) return;
    this.#watchSubdirs(name, path.join(this.#dir, name, rel), rel);
  }

  #watch(name: string, rel: string): boolean {
    const w = this.#env.inotify.watch(path.join(this.#dir, name, rel), (event, file) => this.#onEvent(name, rel, event, file), () => this.unwatch(name));
    if (w === 'limit') this.#env.onLimit();
    if (typeof w === 'string') return false;
    this.#watched.get(name)?.set(rel, w);
    return true;
  }

  #onEvent(name: string, rel: string, event: string, file: string | null): void {
    if (!this.#watched.has(name)) return;
    this.#dirty.add(name);
    if (event === 'rename' && file !== null && this.#created.length < MAX_SUBDIRS) this.#created.push([name, path.join(rel, file)]);
    this.#env.mark();
  }
}
