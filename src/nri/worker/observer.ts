// What the NRI worker tells whoever keeps its status (the supervisor, nri/supervisor/supervisor.ts): the
// session's life and a result per CreateContainer. Names, counts, durations and envhook's own
// one-line messages only: never an annotation value, env entry or anything read from a file.
import type { MissedContainer, RegisteredInfo } from '../worker-messages.ts';

/** How one CreateContainer ended: an adjustment, nothing to do, envhook's refusal, a fault. */
export type RequestResult = 'adjusted' | 'empty' | 'refused' | 'error';

export interface NriObserver {
  /** Registered and configured: on the runtime's fd, or dialled on `socket`. */
  registered(info: RegisteredInfo & { socket?: string | undefined }): void;
  /** The session ended (runtime gone, dropped, protocol error, stopped). */
  disconnected(reason: string): void;
  /** One CreateContainer: its result, how long envhook took, and for a refusal or fault its one line. */
  request(result: RequestResult, seconds: number, message?: string): void;
  /**
   * Containers that asked for envhook and run without its changes: at Synchronize all of them
   * (`whole`, the list may be empty), at PostCreateContainer one more.
   */
  missed(containers: readonly MissedContainer[], whole: boolean): void;
  /** Evictions asked of the runtime for missed containers: those it took and those it refused. */
  evicted(ids: readonly string[], failed: readonly string[]): void;
}

const noop = (): void => {};
export const silentObserver: NriObserver = { registered: noop, disconnected: noop, request: noop, missed: noop, evicted: noop };
