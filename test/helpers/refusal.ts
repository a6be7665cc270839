// The refusal check: what an admin sees when a command refuses. Exit status 1 and ONE line
// `envhook: …` on stderr: exactly `line` (a string, with its newline) or a line `line` matches.
// A caller that also wants nothing on stdout, or the node's files untouched, says so.
import type { Test } from 'tap';

interface Result {
  status: number | string | null; // a string: why there is no exit status (still running)
  stderr: string;
  stdout?: string;
}

export function refused(t: Test, r: Result, line: string | RegExp, what = 'refused'): void {
  t.equal(r.status, 1, `${what}: exit status 1`);
  if (typeof line === 'string') t.equal(r.stderr, line, `${what}: the line`);
  else t.match(r.stderr, line, `${what}: the line`);
  t.match(r.stderr, /^envhook: [^\n]*\n$/, `${what}: one line, envhook: …`);
}
