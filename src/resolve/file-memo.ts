// Env files as the resident NRI plugin decoded them last: a pod's containers and restarts read
// the same env files at every CreateContainer, and reading and parsing them was about a quarter
// of the plugin's time a start (bench row 8). Each start still reaches every file the confined
// way (fs/volume-file.ts: no symlink but `..data`, a regular file) and stats it (fs/confined.ts:
// one lstat of a name directly in the volume, an O_PATH handle's fstat below that); only a file
// whose identity (device, inode), size, modification and change times are those of a file
// decoded before is not read again: its decoded variables are used. A file is remembered only
// when its last change is older than SETTLED_MS at the read: the kernel stamps change times with
// its clock tick (4 ms here), so a file written again within the same tick as a read would keep
// its stamps; one read well after its last change cannot be changed since without new stamps
// (the "racy git" rule). Bounded in files and in their bytes, the oldest dropped first.
// Processes that run once (the shim, inject) never read a file twice.
import type fs from 'node:fs';
import { BoundedMemo } from '../bounded-memo.ts';

/** What a file decoded to: an env file's variables, or a whole file's value. */
export interface Decoded {
  decoded: unknown;
}

interface Memo extends Decoded {
  stamp: string;
}

const SETTLED_MS = 2000;
const MAX_FILES = 256;
const MAX_BYTES = 1 << 20;

const memos = new BoundedMemo<Memo>(MAX_FILES, MAX_BYTES);

const keyOf = (kind: string, st: fs.Stats) => `${kind}:${st.dev}:${st.ino}`;
const stampOf = (st: fs.Stats) => `${st.size}:${st.mtimeMs}:${st.ctimeMs}`;

/** The decoded content of the file `st` describes, when it was decoded before and is unchanged since. */
export function unchangedFile(kind: 'env' | 'value', st: fs.Stats): Decoded | undefined {
  const m = memos.get(keyOf(kind, st));
  return m !== undefined && m.stamp === stampOf(st) ? m : undefined;
}

/** Remembers what the file `st` describes (read whole: `bytes`) decoded to, if it had settled when read. */
export function rememberFile(kind: 'env' | 'value', st: fs.Stats, bytes: number, decoded: unknown, now = Date.now()): void {
  const key = keyOf(kind, st);
  memos.delete(key);
  if (now - Math.max(st.ctimeMs, st.mtimeMs) < SETTLED_MS || bytes !== st.size) return;
  memos.set(key, { stamp: stampOf(st), decoded }, bytes);
}
