// What the owned copies under a run directory hold (docs/ownership.md#budgets): bytes of file
// content and files, per copy (its current payload, what `..data` points at), per pod and for
// the node. The budgets of a start or a rewrite are checked against it (budget.ts); `envhook
// status`, the NRI status file and the metrics show it. A payload directory is never changed
// once it is swapped in (build.ts writes a new one each time), so a measure is kept by the
// copy's directory and its `..data` target, and a process that measures again (the copier,
// at each job) reads only one link per copy plus the payloads it has not seen, a step each
// (steps.ts: the NRI worker measures in slices of its loop). The
// copies are root's alone (layout.ts): listed without bounds of a pod's choosing, but never a
// link followed.
import fs from 'node:fs';
import path from 'node:path';
import { DATA_LINK } from '../fs/datadir.ts';
import { copiesRoot } from './layout.ts';
import { drain, type Steps } from './steps.ts';

export interface CopyUsage {
  bytes: number;
  files: number;
}

export interface RunDirUsage {
  /** Bytes of file content of every copy's current payload. */
  bytes: number;
  files: number;
  /** Copies (volumes) with a payload. */
  copies: number;
  /** Per pod UID, per volume. */
  pods: Map<string, Map<string, CopyUsage>>;
}

/** Payloads measured, by `<copy dir>\0<..data target>`: one cache per process (the NRI worker's, a shim's create). */
const measured = new Map<string, CopyUsage>();

/** The copies under `runDir` now, a step per copy and per payload entry not measured before (steps.ts). */
export function* measureCopiesSteps(runDir: string): Steps<RunDirUsage> {
  const out: RunDirUsage = { bytes: 0, files: 0, copies: 0, pods: new Map() };
  const seen = new Set<string>();
  for (const pod of names(copiesRoot(runDir))) {
    const podDir = path.join(copiesRoot(runDir), pod);
    const volumes = new Map<string, CopyUsage>();
    for (const volume of names(podDir)) {
      const dir = path.join(podDir, volume);
      const u = yield* measureCopy(dir, seen);
      if (u === undefined) continue;
      volumes.set(volume, u);
      out.bytes += u.bytes;
      out.files += u.files;
      out.copies++;
      yield;
    }
    if (volumes.size > 0) out.pods.set(pod, volumes);
  }
  for (const key of measured.keys()) if (!seen.has(key)) measured.delete(key);
  return out;
}

/** measureCopiesSteps in one go. */
export function measureCopies(runDir: string): RunDirUsage {
  return drain(measureCopiesSteps(runDir));
}

/** The sum of `usage`'s pod `podUid` without the volumes in `except`: bytes, files, volumes. */
export function podUsage(usage: RunDirUsage, podUid: string, except: ReadonlySet<string>): CopyUsage & { volumes: number } {
  const out = { bytes: 0, files: 0, volumes: 0 };
  for (const [volume, u] of usage.pods.get(podUid) ?? []) {
    if (except.has(volume)) continue;
    out.bytes += u.bytes;
    out.files += u.files;
    out.volumes++;
  }
  return out;
}

function* measureCopy(dir: string, seen: Set<string>): Steps<CopyUsage | undefined> {
  let target: string;
  try {
    target = fs.readlinkSync(path.join(dir, DATA_LINK));
  } catch {
    return undefined; // being made, or not a copy
  }
  const key = `${dir}\0${target}`;
  seen.add(key);
  let u = measured.get(key);
  if (u === undefined) {
    const sum = { bytes: 0, files: 0 };
    if (!target.includes('/')) yield* sumTree(path.join(dir, target), sum, 0);
    u = sum;
    measured.set(key, u);
  }
  return u;
}

function* sumTree(dir: string, u: CopyUsage, depth: number): Steps<void> {
  if (depth > 256) return;
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return; // retired meanwhile
  }
  for (const e of entries) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) yield* sumTree(p, u, depth + 1);
    else if (e.isFile()) {
      const st = fs.lstatSync(p, { throwIfNoEntry: false });
      if (st === undefined) continue;
      u.bytes += st.size;
      u.files++;
      yield;
    }
  }
}

function names(dir: string): string[] {
  try {
    return fs.readdirSync(dir);
  } catch {
    return [];
  }
}
