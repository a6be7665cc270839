// The budgets of owned copies (docs/ownership.md#budgets): what one pod's copies may hold (bytes
// of file content, files, volumes) and what all the copies of the node may hold (bytes), and the
// free space of the run directory, checked for a whole start (every volume it copies) before its
// first write, and for a rewrite before it writes. The run directory is a tmpfs of the node's
// memory (/run: 10-20% of RAM): without these a pod of many owned volumes could fill it, and
// with it what systemd, the kubelet and the runtime keep there. The sizes come from the measure
// (snapshot.ts: lstat only, nothing read), in the copier's job. A refusal is one line naming
// the pod, the volume, the budget and its setting, and what to do: never a byte of a file.
import fs from 'node:fs';
import path from 'node:path';
import { EnvhookError } from '../errors.ts';
import type { Settings } from '../settings.ts';
import type { Snapshot } from './snapshot.ts';
import { podUsage, type RunDirUsage } from './usage.ts';

export interface CopyBudgets {
  /** Bytes of file content of one pod's copies. */
  podBytes: number;
  /** Files of one pod's copies. */
  podFiles: number;
  /** Volumes one pod has copies of. */
  podVolumes: number;
  /** Bytes of file content of all copies under the run directory; undefined: nodeBytesDefault of its file system. */
  nodeBytes: number | undefined;
}

const MiB = 1024 * 1024;

/** The defaults, and why: docs/ownership.md#budgets. */
export const DEFAULT_BUDGETS: CopyBudgets = { podBytes: 32 * MiB, podFiles: 8192, podVolumes: 32, nodeBytes: undefined };

/** Without a setting: a quarter of the run directory's file system, at most 256 MiB. */
export const NODE_BYTES_CAP = 256 * MiB;

export function nodeBytesDefault(st: fs.StatsFs): number {
  return Math.min(NODE_BYTES_CAP, Math.floor((st.blocks * st.bsize) / 4));
}

/** The node budget in force for `runDir`. */
function nodeBudget(budgets: CopyBudgets, st: fs.StatsFs): number {
  return budgets.nodeBytes ?? nodeBytesDefault(st);
}

export interface BudgetCheck {
  runDir: string;
  podUid: string;
  budgets: CopyBudgets;
  /** The copies there now (usage.ts). */
  usage: RunDirUsage;
  /** What is about to be written: one snapshot per volume (a start's), or one (a rewrite). */
  snaps: readonly Snapshot[];
}

/** Throws the refusal of the first budget `c.snaps` would pass, or of too little free space. */
export function checkBudgets(c: BudgetCheck): void {
  const { budgets: b, podUid, snaps } = c;
  const volumes = new Set(snaps.map((s) => s.volume));
  const pod = podUsage(c.usage, podUid, volumes);
  let node = c.usage.bytes - (c.usage.pods.get(podUid) === undefined ? 0 : sumOf(c.usage, podUid, volumes));
  const st = statfs(c.runDir, snaps[0]?.volume ?? '?', podUid);
  const nodeMax = nodeBudget(b, st);
  for (const s of snaps) {
    pod.bytes += s.bytes;
    pod.files += s.files;
    pod.volumes++;
    node += s.bytes;
    const at = `volume "${s.volume}" of pod ${podUid}`;
    if (pod.volumes > b.podVolumes)
      throw over(
        at,
        `the pod would have owned copies of ${pod.volumes} volumes`,
        `${b.podVolumes}`,
        'podCopyVolumes',
        'fewer volumes with owners',
      );
    if (pod.files > b.podFiles)
      throw over(
        at,
        `the pod's owned copies would hold ${pod.files} files`,
        `${b.podFiles} files`,
        'podCopyFiles',
        'fewer files in its volumes with owners',
      );
    if (pod.bytes > b.podBytes)
      throw over(
        at,
        `the pod's owned copies would hold ${size(pod.bytes)}`,
        size(b.podBytes),
        'podCopyBytes',
        'smaller volumes with owners',
      );
    if (node > nodeMax)
      throw new EnvhookError(
        `${at}: the node's owned copies would hold ${size(node)}, over the node's budget of ${size(nodeMax)} (nodeCopyBytes${b.nodeBytes === undefined ? ', by default a quarter of the run directory' : ''}): ` +
          `the node holds too many owned copies already; raise nodeCopyBytes in the settings file (ENVHOOK_NODE_COPY_BYTES) if its run directory has room`,
      );
  }
  checkFree(c, st);
}

/** The run directory's free blocks and inodes against what the copies would take there. */
function checkFree(c: BudgetCheck, st: fs.StatsFs): void {
  let blocks = 0;
  let inodes = 0;
  for (const s of c.snaps) {
    for (const e of s.entries) blocks += Math.ceil(e.size / st.bsize);
    inodes += s.entries.length + s.visible.length + 2; // the payload's entries, the links, its directory, `..data`
  }
  const at = `volume "${c.snaps[0]?.volume ?? '?'}" of pod ${c.podUid}`;
  if (blocks > st.bavail)
    throw new EnvhookError(
      `${at}: the run directory ${c.runDir} has ${size(st.bavail * st.bsize)} free, the pod's owned copies need ${size(blocks * st.bsize)}: ` +
        `free space there (or mount a larger tmpfs), or give the pod smaller volumes with owners`,
    );
  if (st.files > 0 && inodes > st.ffree)
    throw new EnvhookError(
      `${at}: the run directory ${c.runDir} has ${st.ffree} free inodes, the pod's owned copies need ${inodes}: ` +
        `mount a tmpfs with more inodes there (nr_inodes), or give the pod fewer files in its volumes with owners`,
    );
}

function sumOf(usage: RunDirUsage, podUid: string, volumes: ReadonlySet<string>): number {
  let n = 0;
  for (const [volume, u] of usage.pods.get(podUid) ?? []) if (volumes.has(volume)) n += u.bytes;
  return n;
}

/** The run directory's file system (the nearest directory that exists: the first copy makes the run directory). */
function statfs(runDir: string, volume: string, podUid: string): fs.StatsFs {
  let dir = runDir;
  while (!fs.existsSync(dir) && path.dirname(dir) !== dir) dir = path.dirname(dir);
  try {
    return fs.statfsSync(dir);
  } catch (cause) {
    const code = (cause as NodeJS.ErrnoException).code ?? 'error';
    throw new EnvhookError(`volume "${volume}" of pod ${podUid}: cannot measure the free space of run directory ${runDir} (${code})`, {
      cause,
    });
  }
}

function over(at: string, would: string, budget: string, setting: string, fewer: string): EnvhookError {
  const env = `ENVHOOK_${setting.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase()}`;
  return new EnvhookError(
    `${at}: ${would}, over the pod's budget of ${budget} (${setting}): give the pod ${fewer}, or raise ${setting} in the settings file (${env})`,
  );
}

/** `12 bytes`, `3.5 KiB`, `16 MiB`: two decimals at most. */
export function size(bytes: number): string {
  const round = (n: number) => String(Math.round(n * 100) / 100);
  if (bytes >= MiB) return `${round(bytes / MiB)} MiB`;
  if (bytes >= 1024) return `${round(bytes / 1024)} KiB`;
  return `${bytes} bytes`;
}

/** The budgets the settings give (settings.ts: podCopyBytes, podCopyFiles, podCopyVolumes, nodeCopyBytes). */
export function budgetsOf(s: Pick<Settings, 'podCopyBytes' | 'podCopyFiles' | 'podCopyVolumes' | 'nodeCopyBytes'>): CopyBudgets {
  return {
    podBytes: s.podCopyBytes ?? DEFAULT_BUDGETS.podBytes,
    podFiles: s.podCopyFiles ?? DEFAULT_BUDGETS.podFiles,
    podVolumes: s.podCopyVolumes ?? DEFAULT_BUDGETS.podVolumes,
    nodeBytes: s.nodeCopyBytes,
  };
}
