// Work proportional to the node's pods (a Synchronize's pods, the records and copies read back at a
// worker's start) done in slices on the resident process's loop: at most SLICE_MS at a time, then
// the loop turns (setImmediate) so that the runtime's requests, the heartbeat to the supervisor
// and inotify events run in between. The NRI worker answers requests the runtime times out after
// 2 s, and its supervisor counts 1.5 s without a heartbeat as a hang: 250 pods done in one go took
// up to 0.7 s of loop time on a node at load 26 (two cores), and more than the supervisor allows
// at load 37, where each new worker was killed as hung right after it registered.
import { runInSlices, SLICE_MS, type Steps } from '../mirror/steps.ts';

/** The longest a slice runs before the loop turns (the owned copies' jobs run in the same slices: mirror/steps.ts). */
export { SLICE_MS };

/**
 * Calls `step` on each item, SLICE_MS at a time (mirror/steps.ts runInSlices); stops before an
 * item once `cancelled()` says so. Resolves with whether every item was done. `step` must not
 * throw (its errors are its own to log).
 */
export function inSlices<T>(items: Iterable<T>, step: (item: T) => void, cancelled: () => boolean = () => false): Promise<boolean> {
  function* each(): Steps<boolean> {
    for (const item of items) {
      if (cancelled()) return false;
      step(item);
      yield;
    }
    return true;
  }
  return runInSlices(each());
}
