// One check of the node, as `envhook doctor` prints it and `envhook status` reuses it: its name,
// whether it passed, what it found and, for a problem, what to do. A check that cannot run says
// `skipped` and why: never `ok` for something not looked at.
export type CheckState = 'ok' | 'problem' | 'skipped';

export interface CheckResult {
  check: string;
  state: CheckState;
  /** What was found (ok, problem) or why the check did not run (skipped): one line. */
  what: string;
  /** A problem's remedy. */
  todo?: string;
}

export const ok = (check: string, what: string): CheckResult => ({ check, state: 'ok', what });
export const problem = (check: string, what: string, todo?: string): CheckResult => ({
  check,
  state: 'problem',
  what,
  ...(todo ? { todo } : {}),
});

/** What to do when the runtime cannot read its own configuration. */
export const FIX_FILES = 'fix the file the runtime cannot read';

export const skipped = (check: string, why: string): CheckResult => ({ check, state: 'skipped', what: why });

/** `ok <check>: <what>`, `problem <check>: <what> — <todo>`, `skipped <check>: <why>`. */
export function checkLine(r: CheckResult): string {
  return `${r.state} ${r.check}: ${r.what}${r.todo ? ` — ${r.todo}` : ''}`;
}
