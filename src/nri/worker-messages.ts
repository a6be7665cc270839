// What the NRI worker and its supervisor say to each other over Node's IPC channel (the worker's
// side: worker/supervisor-link.ts; the supervisor's: supervisor/supervisor.ts). Names, counts,
// durations and envhook's own one-line messages only: never an annotation value, env entry or
// anything read from a file.
import type { OwnerWatchStats } from './status-file.ts';

export interface RegisteredInfo {
  runtimeName: string;
  runtimeVersion: string;
  /** The NRI version the runtime's Configure gave, when it gives one. */
  nriVersion?: string | undefined;
}

export interface MissedContainer {
  id: string;
  name: string;
  pod: string;
  namespace: string;
  podUid: string;
  /** The pod asks for eviction (EVICT_KEY "true"). */
  podEvicts: boolean;
  /** Why the annotations could not be read, when they could not (the create would have been refused). */
  invalid?: string;
  /** Its process on the host, when the runtime said (a Synchronize's containers that run). */
  pid?: number;
}

/** How often the worker beats; the supervisor calls a worker silent for its hang limit hung. */
export const BEAT_MS = 200;

export interface BeatDeltas {
  adjusted: number;
  empty: number;
  refused: number;
  errors: number;
  /** Seconds each CreateContainer took envhook, since the last beat. */
  durations: number[];
  /** The last refusal's or fault's one line, if any since the last beat. */
  lastError?: string;
}

export type WorkerMessage =
  /** `o`: the owner watcher's figures since the worker started, on the first beat after they changed. */
  | { t: 'beat'; d?: BeatDeltas; o?: OwnerWatchStats }
  | ({ t: 'registered'; socket?: string | undefined } & RegisteredInfo)
  | { t: 'disconnected'; reason: string }
  /** `whole`: every missed container there is (a Synchronize's), else some more (a PostCreateContainer's). */
  | { t: 'missed'; containers: MissedContainer[]; whole: boolean }
  | { t: 'evicted'; ids: string[]; failed: string[] }
  | { t: 'end'; why: 'runtime-gone' };

export type Send = (m: WorkerMessage) => void;
