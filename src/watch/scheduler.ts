// Coalescing, yielding work queue. A task marked many times before it runs runs once (a
// burst of inotify events for one rewrite is one pass), and tasks run one per event-loop turn
// (setImmediate), so a volume rewritten 100 times a second never holds the loop for more than
// one pass: timers, sockets and other pods' requests run between any two passes.

export interface Task {
  /** Must not throw: errors are the task's to log. */
  run(): void;
}

export interface Scheduler {
  mark(task: Task): void;
  /** Drops a queued task (its volume was removed). */
  cancel(task: Task): void;
  /** Tasks waiting to run. */
  readonly pending: number;
  close(): void;
}

export function createScheduler(): Scheduler {
  const queue = new Set<Task>(); // insertion order: first marked, first run
  let immediate: NodeJS.Immediate | undefined;
  let closed = false;
  const turn = (): void => {
    immediate = undefined;
    const next = queue.values().next();
    if (next.done) return;
    queue.delete(next.value);
    // Scheduled before running, so a task that throws despite its contract still lets the rest run.
    if (queue.size > 0) immediate = setImmediate(turn);
    next.value.run();
  };
  return {
    mark(task) {
      if (closed) return;
      queue.add(task);
      immediate ??= setImmediate(turn);
    },
    cancel(task) {
      queue.delete(task);
    },
    get pending() {
      return queue.size;
    },
    close() {
      closed = true;
      queue.clear();
      if (immediate) clearImmediate(immediate);
      immediate = undefined;
    },
  };
}
