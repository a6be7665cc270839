// One payload file of a copy, from the kubelet's payload to the copy, a chunk at a time: a
// copy's memory is one chunk, whatever the volume holds (a volume read whole before its first
// write held up to its 16 MiB limit per job). The file is opened the way the measure looked at
// it (snapshot.ts): one name at a time from the open data directory, no symlink followed, and it
// must be the inode measured, of the size measured, to its end: a file that changed since is
// refused, never copied short or long. The chunk holds secrets: zeroed before it is let go.
import fs from 'node:fs';
import { EnvhookError } from '../errors.ts';
import { ConfinedError, openConfinedAt, splitRelative } from '../fs/confined.ts';
import type { SnapshotEntry } from './snapshot.ts';
import type { Steps } from './steps.ts';

const CHUNK = 64 * 1024;

/** A chunk a copy job reuses for all its files; zero it with `release` when the job ends. */
export interface CopyBuffer {
  buf: Buffer;
}

export function copyBuffer(): CopyBuffer {
  return { buf: Buffer.allocUnsafe(CHUNK) };
}

export function releaseBuffer(b: CopyBuffer): void {
  b.buf.fill(0);
}

/**
 * Copies file `e` below the data directory `dataFd` into the open `destFd`, a step per chunk
 * (steps.ts). Throws EnvhookError naming `volume` and the file.
 */
export function* copyFileContent(volume: string, dataFd: number, e: SnapshotEntry, destFd: number, b: CopyBuffer): Steps<void> {
  const what = `volume "${volume}": file ${JSON.stringify(e.rel)}`;
  let src;
  try {
    src = openConfinedAt(dataFd, splitRelative(e.rel));
  } catch (err) {
    if (err instanceof ConfinedError) throw new EnvhookError(`${what}: ${err.reason}`, { cause: err });
    throw err;
  }
  try {
    if (src.stat.ino !== e.ino || src.stat.size !== e.size) throw changed(what);
    let total = 0;
    for (;;) {
      // One byte past the size measured: a file that grew is seen, not cut.
      const n = fs.readSync(src.fd, b.buf, 0, Math.min(b.buf.length, e.size + 1 - total), null);
      if (n === 0) break;
      total += n;
      if (total > e.size) throw changed(what);
      for (let at = 0; at < n;) at += fs.writeSync(destFd, b.buf, at, n - at);
      yield;
    }
    if (total !== e.size) throw changed(what);
  } finally {
    fs.closeSync(src.fd);
  }
}

function changed(what: string): EnvhookError {
  return new EnvhookError(`${what} changed while being copied: the copy is not made (the next start or rewrite copies it again)`);
}
