// Resumable work (docs/design-copies.md#owned-copies-in-slices): an owned copy's job written as a
// generator that yields after each step (an entry measured, a 64 KiB chunk copied, an entry
// written or removed), so that one code path serves two callers. A process with nothing else to
// answer (the shim's create, tests) runs a job whole (drain). The NRI worker runs it on its own
// loop in slices (runInSlices: at most SLICE_MS of work, then the loop turns), so that the runtime's
// requests and the heartbeat to the supervisor are answered while a pod's volume of thousands of
// files is copied or removed.
import { leaveCwd } from '../fs/confined.ts';

/** Work that yields after each of its steps and returns its result at the end. */
export type Steps<T> = Generator<void, T, undefined>;

/** The longest a slice runs before the loop turns (also the watcher's slices, watch/slices.ts). */
export const SLICE_MS = 10;

/** The loop turns once: timers, I/O and requests that were waiting run. */
const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Runs `steps` to its end in one go. */
export function drain<T>(steps: Steps<T>): T {
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
  }
}

/** When the current slice began: shared by the works run one after the other, so that many short ones turn the loop too. */
export interface Slice {
  start: number;
}

export const newSlice = (): Slice => ({ start: performance.now() });

/**
 * Runs `steps` SLICE_MS at a time, the loop turning between slices (the working directory back
 * home meanwhile: fs/confined.ts leaveCwd). After a turn, `stop()` may give an error: it is thrown
 * into the work at the step it had reached (its own clean-ups run, in one go) and rejects.
 * `slice`: the slice this work goes on with (one of a queue's works after another).
 */
export async function runInSlices<T>(steps: Steps<T>, stop: () => Error | undefined = () => undefined, slice = newSlice()): Promise<T> {
  for (;;) {
    // Checked before each step, the first too: one work after another turns the loop as one would.
    if (performance.now() - slice.start >= SLICE_MS) {
      const back = leaveCwd();
      await turn();
      back();
      slice.start = performance.now();
      const why = stop();
      if (why !== undefined) {
        steps.throw(why);
        return drain(steps);
      }
    }
    const r = steps.next();
    if (r.done) return r.value;
  }
}
