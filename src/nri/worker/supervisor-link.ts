// The worker's side of the link to its supervisor (Node's IPC channel): a heartbeat every
// BEAT_MS carrying what happened since the last one (counts, request durations, the last
// refusal's line), and at once what changes the status: registered, disconnected, missed
// containers, evictions, the end. No message carries a value: only names, counts and envhook's
// own one-line messages.
import type { NriObserver } from './observer.ts';
import type { OwnerWatchStats } from '../status-file.ts';
import { BEAT_MS, type BeatDeltas, type Send, type WorkerMessage } from '../worker-messages.ts';

const empty = (): BeatDeltas => ({ adjusted: 0, empty: 0, refused: 0, errors: 0, durations: [] });

export interface SupervisorLink {
  observer: NriObserver;
  /** The owner watcher's figures, read at every beat and sent when they changed. */
  watchOwners(stats: () => OwnerWatchStats): void;
  stop(): void;
}

/** The observer the worker's sessions report to, and the heartbeat that carries its counts. */
export function linkToSupervisor(send: Send, beatMs = BEAT_MS): SupervisorLink {
  let d = empty();
  let owners: (() => OwnerWatchStats) | undefined;
  let sentOwners = '';
  const beat = () => {
    const o = owners?.();
    const key = o === undefined ? '' : JSON.stringify(o);
    const m: WorkerMessage = { t: 'beat' };
    if (d.durations.length > 0 || d.lastError !== undefined) {
      m.d = d;
      d = empty();
    }
    if (key !== sentOwners) {
      m.o = o;
      sentOwners = key;
    }
    send(m);
  };
  const timer = setInterval(beat, beatMs);
  beat();
  const observer: NriObserver = {
    registered: (info) => send({ t: 'registered', ...info }),
    disconnected: (reason) => send({ t: 'disconnected', reason }),
    request(result, seconds, message) {
      if (result === 'adjusted') d.adjusted += 1;
      else if (result === 'empty') d.empty += 1;
      else if (result === 'refused') d.refused += 1;
      else d.errors += 1;
      d.durations.push(seconds);
      if (message !== undefined) d.lastError = message;
    },
    missed: (containers, whole) => send({ t: 'missed', containers: [...containers], whole }),
    evicted: (ids, failed) => send({ t: 'evicted', ids: [...ids], failed: [...failed] }),
  };
  return {
    observer,
    watchOwners(stats) {
      owners = stats;
    },
    stop() {
      clearInterval(timer);
      beat();
    },
  };
}
