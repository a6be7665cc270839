// fs.watch (inotify on Linux) for the watcher, so that no watch error ever reaches a caller.
// When the kernel's limits are reached (ENOSPC: fs.inotify.max_user_watches; EMFILE/ENFILE:
// no descriptor for the inotify instance), the first such failure is logged once for the whole
// process and the caller falls back to polling; a directory already gone is not an error.
import fs from 'node:fs';
import type { Logger } from '../log.ts';

export type WatchListener = (event: string, name: string | null) => void;
/** fs.watch's shape; the registry's tests may wrap it. */
export type WatchFn = (dir: string, listener: WatchListener) => fs.FSWatcher;

/** Not persistent: the watches never keep a process alive on their own (the daemon decides). */
export const defaultWatch: WatchFn = (dir, listener) => fs.watch(dir, { persistent: false, encoding: 'utf8' }, listener);

const LIMIT_CODES = new Set(['ENOSPC', 'EMFILE', 'ENFILE']);

/** An established watch: close() is idempotent. */
export interface Watch {
  close(): void;
}

export interface Inotify {
  /**
   * A watch on `dir`, or 'limit' (logged once per process) or 'gone' (no such directory).
   * `onError` runs when an established watch fails later; the watch is closed by then.
   */
  watch(dir: string, listener: WatchListener, onError: () => void): Watch | 'limit' | 'gone';
  /** Watches open now. */
  readonly open: number;
}

export function createInotify(log: Logger, watchFn: WatchFn = defaultWatch, pollMs = 1000): Inotify {
  let limitLogged = false;
  let open = 0;
  return {
    watch(dir, listener, onError) {
      let w: fs.FSWatcher;
      try {
        w = watchFn(dir, listener);
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code ?? '';
        if (LIMIT_CODES.has(code)) {
          if (!limitLogged) log.warn({ code, dir, pollMs }, 'inotify limit reached: volumes without a watch are polled instead (logged once)');
          limitLogged = true;
          return 'limit';
        }
        if (code === 'ENOENT' || code === 'ENOTDIR') return 'gone';
        log.warn({ code, dir }, 'cannot watch a volume directory: it is polled instead');
        return 'limit';
      }
      open++;
      let closed = false;
      const watch: Watch = {
        close() {
          if (closed) return;
          closed = true;
          open--;
          w.close();
        },
      };
      w.on('error', (err) => {
        log.debug({ code: (err as NodeJS.ErrnoException).code, dir }, 'watch ended');
        watch.close();
        onError();
      });
      return watch;
    },
    get open() {
      return open;
    },
  };
}
