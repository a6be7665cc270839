// Waiting in tests, one way: a pause (`sleep`) and a bounded poll (`waitFor`) that fails with what
// it waited for. No test asserts how long something took; a wait is only ever bounded.

/** Resolves after `ms` milliseconds. */
export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Resolves once `cond()` holds (it may be async), checking every `every` ms; rejects with
 * `timed out waiting for <what>` after `ms`.
 */
export async function waitFor(cond: () => boolean | Promise<boolean>, ms = 5000, what = 'condition', every = 2): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(every);
  }
}
