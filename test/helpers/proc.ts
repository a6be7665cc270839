// What the kernel shows of a container's PID 1 under /proc, for tests that check the environment
// a runtime really gave a process.
import fs from 'node:fs';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** /proc/PID/FILE, or '' when the process is gone. */
export function readProc(pid: number, file: string): string {
  try {
    return fs.readFileSync(`/proc/${pid}/${file}`, 'utf8');
  } catch {
    return '';
  }
}

/** The environment of PID as the kernel holds it (/proc/PID/environ), as NAME → value. */
export function procEnviron(pid: number): Map<string, string> {
  const out = new Map<string, string>();
  for (const entry of fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0')) {
    const eq = entry.indexOf('=');
    if (eq > 0) out.set(entry.slice(0, eq), entry.slice(eq + 1));
  }
  return out;
}

const RUNC_INIT = /^([^\0]*\/)?runc\0init\0/;

/**
 * Resolves once PID is no longer `runc init`: runc's start returns when it has signalled its
 * init, which then execs the container's process, and until then /proc/PID/environ is runc's.
 * On a loaded machine that exec can come late; a process still in `runc init` after `ms` is an
 * error, never read as the container's (a churn once classified such a container as started
 * without its env).
 */
export async function waitExeced(pid: number, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (RUNC_INIT.test(readProc(pid, 'cmdline'))) {
    if (Date.now() > end) throw new Error(`PID ${pid} still runc init after ${ms} ms`);
    await sleep(20);
  }
}
