// Listing a directory a pod controls (an emptyDir, a CSI volume): the entries are read one at a
// time and the listing stops at the first entry past its limit, so the time and memory spent
// are bounded by the limit, not by what the pod created. (fs.readdirSync lists the whole
// directory first: a volumeRef on a directory of a million files took seconds and hundreds of
// MB before its limit was checked.)
import fs from 'node:fs';
import { ConfinedError } from './confined.ts';

/** The part of fs.Dir a listing uses: one entry at a time, null at the end. */
export interface DirReader {
  readSync(): fs.Dirent<Buffer> | null;
  closeSync(): void;
}

export type OpenDirReader = (dir: string) => DirReader;

// A small batch: Node reads entries from the kernel this many at a time, so at most this many
// beyond the limit are ever decoded.
const BATCH = 32;

// Names as bytes (a name is bytes on Linux); Node's types know only string encodings here.
const openReader: OpenDirReader = (dir) =>
  fs.opendirSync(dir, { encoding: 'buffer' as BufferEncoding, bufferSize: BATCH }) as unknown as DirReader;

/**
 * The entries (names as bytes, with their getdents types) of directory `dir`, which the caller
 * names as confined.ts does (`/proc/self/fd/<dirfd>/.`: the open directory, no path walked).
 * At most `max`; ConfinedError `has more than <max> entries` at entry `max + 1`, read no further.
 */
export function listBounded(dir: string, max: number, open: OpenDirReader = openReader): fs.Dirent<Buffer>[] {
  const reader = open(dir);
  const entries: fs.Dirent<Buffer>[] = [];
  try {
    for (let e = reader.readSync(); e !== null; e = reader.readSync()) {
      if (entries.length === max) throw new ConfinedError(`has more than ${max} entries`);
      entries.push(e);
    }
  } finally {
    reader.closeSync();
  }
  return entries;
}
