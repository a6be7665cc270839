// What one plugin session's methods share (methods.ts, create-container.ts): what the worker
// gave the session (handler, owner watcher, observer, log) and what the runtime told it so far
// (Configure's timeout and sync block, the parts of a Synchronize, the containers answered).
import { describeError } from '../../errors.ts';
import type { Logger } from '../../log.ts';
import type { NriPod } from '../../facts/nri-facts.ts';
import type { NriSyncContainer } from '../wire/plain-data.ts';
import type { RegisteredInfo } from '../worker-messages.ts';
import type { NriObserver } from './observer.ts';
import type { NriCreateHandler, NriPodEvents } from './types.ts';

export interface SessionState {
  readonly log: Logger;
  readonly handler: NriCreateHandler;
  /** The owner watcher: fed by Synchronize, CreateContainer and StopPodSandbox. */
  readonly pods: NriPodEvents | undefined;
  readonly observer: NriObserver;
  /** Called by Configure: registration is complete. */
  readonly configured: (info: RegisteredInfo) => void;
  /** Called once Synchronize (its last part) is answered: the runtime lists the plugin right after. */
  readonly listed: () => void;
  /** Set by Configure: the runtime drops a plugin that has not answered within it (0: not said). */
  requestTimeoutMs: number;
  /** Set by Configure: the runtime has no sync block, PostCreateContainer is taken (sync-block.ts). */
  postCreate: boolean;
  /**
   * Containers whose CreateContainer this session answered, kept only while PostCreateContainer
   * is taken: their PostCreateContainer is skipped.
   */
  readonly adjusted: Set<string>;
  /** A Synchronize's parts so far: a large state comes in parts (`more`). */
  syncPods: NriPod[];
  syncContainers: NriSyncContainer[];
}

export type SessionInputs = Pick<SessionState, 'log' | 'handler' | 'pods' | 'observer' | 'configured' | 'listed'>;

export const newSessionState = (inputs: SessionInputs): SessionState => ({
  ...inputs,
  requestTimeoutMs: 0,
  postCreate: false,
  adjusted: new Set(),
  syncPods: [],
  syncContainers: [],
});

/** The status message of a failed call: envhook's one line, as the CLI prints it. */
export const statusLine = (err: unknown): string => `envhook: ${describeError(err)}`;

/** Tells the owner watcher, when there is one. Its contract is not to throw; should it, the call is still answered. */
export function notifyPods(s: SessionState, call: string, fn: (pods: NriPodEvents) => void): void {
  if (!s.pods) return;
  try {
    fn(s.pods);
  } catch (err) {
    s.log.error({ err, call }, 'owner watcher failed');
  }
}
