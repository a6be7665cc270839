// Node's on-disk compile cache (V8 code cache) for the bundled CLI: the bundle is compiled
// once per node instead of at every container start.
//
// envhook runs as root. A code cache is executable input that V8 trusts, so it must sit in a
// directory no one else can write: a cache planted in a shared /tmp would run as root in every
// container start. Hence /var/cache/envhook/compile-cache for root, $TMPDIR/envhook-compile-
// cache-<uid> otherwise (tests, developers), and the directory is used only if it is a real
// directory (not a symlink), owned by us, and not writable by group or others. Its parent must
// be owned by root or by us, and be either unwritable by others or sticky (/tmp), so no one can
// swap the directory out. Anything unexpected: run without a cache, never fail.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import module from 'node:module';

export const ROOT_CACHE_DIR = '/var/cache/envhook/compile-cache';

export function defaultCacheDir(uid: number = process.getuid?.() ?? -1): string {
  return uid === 0 ? ROOT_CACHE_DIR : path.join(os.tmpdir(), `envhook-compile-cache-${uid}`);
}

/** Creates (mode 0700) or checks `dir`; returns it when safe to use, else undefined. */
export function safeCacheDir(dir: string, uid: number = process.getuid?.() ?? -1): string | undefined {
  try {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    const st = fs.lstatSync(dir);
    if (!st.isDirectory() || st.uid !== uid || (st.mode & 0o022) !== 0) return undefined;
    const parent = fs.lstatSync(path.dirname(dir));
    const sticky = (parent.mode & 0o1000) !== 0;
    if (!parent.isDirectory() || (parent.uid !== 0 && parent.uid !== uid)) return undefined;
    if ((parent.mode & 0o002) !== 0 && !sticky) return undefined;
    return dir;
  } catch {
    return undefined;
  }
}

/** Enables the compile cache for modules loaded after this call. No-op when unsafe or off. */
export function enableCompileCache(dir: string = defaultCacheDir()): string | undefined {
  if (process.env.NODE_DISABLE_COMPILE_CACHE) return undefined;
  const safe = safeCacheDir(dir);
  if (!safe) return undefined;
  return module.enableCompileCache?.(safe).directory;
}
