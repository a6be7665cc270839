// The NRI status file, `<runDir>/nri-status.json`: what the `envhook nri` supervisor knows of
// its worker's session (connected or not, to what, since when, counts), written on every change
// and read by `envhook status`. It holds names, versions, times and counts only: `lastError` is
// envhook's own one-line message, never a value (the writer never puts one there).
import path from 'node:path';
import { EnvhookError } from '../errors.ts';
import { atomicWrite } from '../fs/atomic-write.ts';
import { readRegularFile } from '../fs/read-regular.ts';
import { validateNriStatus } from '../generated/validators.js';
import { check } from '../schema.ts';

export interface NriCounts {
  registrations: number;
  workerRestarts: number;
  hangs: number;
  adjusted: number;
  empty: number;
  refused: number;
  errors: number;
  missed: number;
  evicted: number;
  /** Evictions that failed (the CRI socket unusable, the runtime's error status, no answer in time). */
  evictionsFailed: number;
  ownerRechowns: number;
}

/** The owner watcher (KEP-5936 volumes rewritten by the kubelet): what it holds now, what it did. */
export interface OwnerWatchStats {
  /** Pods, volumes watched now; inotify watches open; volumes polled for want of a watch. */
  pods: number;
  volumes: number;
  watches: number;
  polled: number;
  /** Files given their owner before the kubelet's `..data` swap made them visible. */
  ownedBeforeSwap: number;
  /** Files given their owner after it: a reader could have found them root's for a moment. */
  ownedAfterSwap: number;
  /** Watches the kernel refused at its inotify limit, and those refused at envhook's own bounds. */
  refusedByKernel: number;
  refusedByBound: number;
  /** Volumes read through envhook's owned copy now (docs/ownership.md). */
  copies?: number;
  /** Bytes of file content, and files, of every owned copy under the run directory now (docs/ownership.md#budgets). */
  copyBytes?: number;
  copyFiles?: number;
  /** Copies swapped in after a kubelet rewrite, and those that failed (the last good copy kept). */
  copyUpdates?: number;
  copyFailures?: number;
  /** Seconds from the kubelet's swap to the copy's: cumulative counts per bound of watch/latency.ts, sum, count. */
  copyLatency?: { buckets: number[]; sum: number; count: number };
}

/**
 * A container that asked for envhook's env and was created without it (while the plugin was not
 * registered), not evicted, not seen to end: names, id and its process only.
 */
export interface UnappliedContainer {
  id: string;
  container: string;
  pod: string;
  namespace: string;
  /** Its process on the host, when the runtime said; with its start time when the supervisor could see it. */
  pid?: number;
  pidStartTicks?: number;
  /** envhook tried to evict it and could not (the CRI socket unusable, the runtime's error). */
  evictionFailed?: boolean;
}

/**
 * How `envhook nri` was started: by the runtime from its plugin directory (the connection
 * handed to it), by a pod (the kubelet gives every container KUBERNETES_SERVICE_HOST: a
 * DaemonSet), or otherwise (a service of the node's dialling the runtime's socket).
 */
export type RunsAs = 'pre-installed' | 'upgraded' | 'daemonset' | 'external';

export interface NriStatus {
  version: 1;
  /** The supervisor's pid. */
  pid: number;
  /** The supervisor's start time (/proc/<pid>/stat, clock ticks since boot): a later process given the same pid has another. */
  pidStartTicks?: number;
  workerPid?: number;
  /** ISO 8601, the supervisor's start. */
  startedAt: string;
  /** NN-name, as registered: "50-envhook". */
  plugin: string;
  /** Absent from a file an older envhook wrote. */
  runsAs?: RunsAs;
  /** The NRI socket dialled as an external plugin (absent while on the runtime's fd). */
  socket?: string;
  /** Registered with the runtime now. */
  connected: boolean;
  /** When `connected` last changed (startedAt at first). */
  since: string;
  runtime?: { name: string; version: string };
  /** The NRI version the runtime's Configure gave, when it gives one. */
  nriVersion?: string;
  counts: NriCounts;
  /** The owner watcher: gauges of the running worker, counters since the supervisor started. */
  owners?: OwnerWatchStats;
  /** Missed containers not evicted and not seen to end (at most MAX_UNAPPLIED; absent from an older envhook's file). */
  unapplied?: UnappliedContainer[];
  /** envhook's one-line message, never a value. */
  lastError?: { at: string; message: string };
  updatedAt: string;
}

const STATUS_FILE = 'nri-status.json';
/** The unapplied containers a status file lists: a full node's worth (110 pods and more), well inside MAX_STATUS_BYTES. */
export const MAX_UNAPPLIED = 200;
/** A status file is a few hundred bytes; anything past this is not one. */
const MAX_STATUS_BYTES = 64 * 1024;

export function emptyCounts(): NriCounts {
  return {
    registrations: 0,
    workerRestarts: 0,
    hangs: 0,
    adjusted: 0,
    empty: 0,
    refused: 0,
    errors: 0,
    missed: 0,
    evicted: 0,
    evictionsFailed: 0,
    ownerRechowns: 0,
  };
}

export function statusPath(runDir: string): string {
  return path.join(runDir, STATUS_FILE);
}

/**
 * Replaces the file atomically (readers see the old or the new status, never a torn one),
 * creating the run directory 0755 where missing; the file is 0600 (or 0640 with the admin's
 * fileGroup: `access`), whatever an older envhook left (0644): it names pods, containers and the
 * runtime, which are root's to read (`envhook status` runs as root). Cheap, for a writer that writes on every change: no check (the
 * supervisor builds the status from counts and its own messages) and no fsync (a status is worth
 * nothing after a power loss): on ext4 the fsyncs cost several times the write itself, and the
 * rename over the old file costs the most of what is left.
 */
export function writeStatus(runDir: string, s: NriStatus, access: { mode: number; gid?: number | undefined } = { mode: 0o600 }): void {
  atomicWrite(statusPath(runDir), JSON.stringify(s, null, 2) + '\n', { mode: access.mode, gid: access.gid, mkdir: true, durable: false });
}

/** The status, or undefined when there is no file; a file that is not one is a one-line error. */
export function readStatus(runDir: string): NriStatus | undefined {
  const file = statusPath(runDir);
  let bytes: Uint8Array;
  try {
    bytes = readRegularFile(file, MAX_STATUS_BYTES + 1);
  } catch (err) {
    if ((((err as Error).cause ?? {}) as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  if (bytes.length > MAX_STATUS_BYTES) throw new EnvhookError(`status file ${file} is larger than ${MAX_STATUS_BYTES} bytes`);
  let data: unknown;
  try {
    data = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch {
    // V8's message quotes the input: never pass it on.
    throw new EnvhookError(`status file ${file} is not valid JSON`);
  }
  check(validateNriStatus, data, `status file ${file}`);
  return data as NriStatus;
}
