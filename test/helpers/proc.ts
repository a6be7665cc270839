// What the kernel shows of a container's PID 1 under /proc, for tests that check the environment
// a runtime really gave a process.
import fs from 'node:fs';
import { schedPolicy } from '../../src/nri/realtime.ts';
import { sleep } from './wait.ts';

/** /proc/PID/FILE, or '' when the process is gone. */
export function readProc(pid: number, file: string): string {
  try {
    return fs.readFileSync(`/proc/${pid}/${file}`, 'utf8');
  } catch {
    return '';
  }
}

/**
 * The environment of PID as the kernel holds it (/proc/PID/environ), as NAME → value. An empty
 * environ is an error, never "no variables": the kernel shows one while an exec is half done
 * (the new memory in place, its arguments and environment not yet recorded), and a container's
 * process always has some (PATH at least). A zombie's or a gone process's read fails (ESRCH,
 * ENOENT).
 */
export function procEnviron(pid: number): Map<string, string> {
  const text = fs.readFileSync(`/proc/${pid}/environ`, 'utf8');
  if (text === '') throw new Error(`PID ${pid} shows no environment (an exec in progress)`);
  const out = new Map<string, string>();
  for (const entry of text.split('\0')) {
    const eq = entry.indexOf('=');
    if (eq > 0) out.set(entry.slice(0, eq), entry.slice(eq + 1));
  }
  return out;
}

const RUNC_INIT = /^([^\0]*\/)?runc\0init\0/;

/**
 * Resolves once PID runs the container's own program: runc's start returns when it has
 * signalled its init, which then execs that program, and until then /proc/PID/environ is runc's.
 * The command line is read until it is neither `runc init` nor empty — the kernel shows an empty
 * one for the instant of the exec itself (the new memory in place, its arguments not yet
 * recorded), and a churn in CI read an empty environment there and counted a container that had
 * its variable as one without. Still not there after `ms` (a slow exec, a zombie, a process gone)
 * is an error.
 */
export async function waitExeced(pid: number, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  for (;;) {
    const cmdline = readProc(pid, 'cmdline');
    if (cmdline !== '' && !RUNC_INIT.test(cmdline)) return;
    if (Date.now() > end)
      throw new Error(`PID ${pid} ${cmdline === '' ? 'shows no command line (exiting, or gone)' : 'still runc init'} after ${ms} ms`);
    await sleep(20);
  }
}

/** The scheduling policy of each thread of PID (/proc/PID/task): 0 ordinary, 1 SCHED_FIFO. */
export function threadPolicies(pid: number): number[] {
  return fs.readdirSync(`/proc/${pid}/task`).map((tid) => schedPolicy(Number(tid)));
}
