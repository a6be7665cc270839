// A pod's owned copy made once and used by each of its containers that mounts the volume (and
// by the containers that replace them after a restart) while the kubelet's payload is the one
// copied: a container start whose volume this process copied before, from the same kubelet
// directory, with the same owners, and whose copy's `..data` still points where that copy put
// it, reads the copy as it is: no payload read, nothing written (docs/ownership.md). Anything
// else (another payload, other owners, a copy the watcher or another process swapped since, a
// volume with subPath mounts, whose entries only a copy job finds, a process that never copied
// it: the shim's create, a new worker) makes the copy as before. What is remembered is this
// process's own: a copy on disk is never taken on trust from its name alone.
import fs from 'node:fs';
import path from 'node:path';
import { DATA_LINK } from '../fs/datadir.ts';
import type { CopyResult } from '../mirror/copy.ts';
import type { PreparedVolume } from './prepare.ts';

interface Made {
  /** The kubelet's timestamped directory copied. */
  source: string;
  /** The owners the copy was written with (ownersKey). */
  owners: string;
  /** The result of the job that made it, as a reuse answers it (never `created`, no subPath entries). */
  result: CopyResult;
  /** Starts that used it as it is: a start refused after making it leaves it to them (chown.ts). */
  reuses: number;
}

/** Bounds what is remembered: copies and their owned paths (the oldest forgotten first). */
const MAX_COPIES = 1024;
const MAX_PATHS = 65_536;

const made = new Map<string, Made>();
let paths = 0;

/** The copy `p` would make, already made by this process and current; undefined: make it. */
export function reusableCopy(p: PreparedVolume): CopyResult | undefined {
  const copy = p.copy;
  if (copy === undefined || copy.subPaths.length > 0) return undefined;
  const m = made.get(copy.dir);
  if (m === undefined || m.source !== copy.source || m.owners !== ownersKey(p)) return undefined;
  try {
    if (fs.readlinkSync(path.join(copy.dir, DATA_LINK)) !== m.result.timestamped) return forget(copy.dir);
    if (!fs.lstatSync(path.join(copy.dir, m.result.timestamped)).isDirectory()) return forget(copy.dir);
  } catch {
    return forget(copy.dir);
  }
  m.reuses++;
  return m.result;
}

/**
 * Whether the copy at `dir` holding `timestamped` may go with a refused start that made it: not
 * when another start of the pod has used it as it is since (its container reads it). Forgotten
 * when it may go: no later start uses a copy being removed.
 */
export function releaseRefusedCopy(dir: string, timestamped: string): boolean {
  const m = made.get(dir);
  if (m !== undefined && m.result.timestamped === timestamped && m.reuses > 0) return false;
  forget(dir);
  return true;
}

/** Remembers the copy a job made for `p` (from the plan's data directory). */
export function rememberCopy(p: PreparedVolume, r: CopyResult): void {
  const copy = p.copy;
  if (copy === undefined || copy.subPaths.length > 0 || r.source !== copy.source) return;
  forget(copy.dir);
  const result = { ...r, created: false, found: [] };
  REUSED.add(result);
  made.set(copy.dir, { source: r.source, owners: ownersKey(p), result, reuses: 0 });
  paths += r.owned.length;
  for (const [dir, m] of made) {
    if (made.size <= MAX_COPIES && paths <= MAX_PATHS) break;
    made.delete(dir);
    paths -= m.result.owned.length;
  }
}

const REUSED = new WeakSet<CopyResult>();

/** True when `r` is a copy made for an earlier start, used as it is (for the log line). */
export function isReused(r: CopyResult): boolean {
  return REUSED.has(r);
}

/** Forgets the copy at `dir` (gone, or swapped by someone else). */
function forget(dir: string): undefined {
  const m = made.get(dir);
  if (m !== undefined) {
    made.delete(dir);
    paths -= m.result.owned.length;
  }
  return undefined;
}

/** How many copies are remembered (tests). */
export function rememberedCopies(): number {
  return made.size;
}

function ownersKey(p: PreparedVolume): string {
  const items = [...p.items].map(([k, o]) => `${o.hostUid}:${k}`).sort();
  return JSON.stringify([p.defaultOwner?.hostUid ?? null, items]);
}
