// Processes under --root's /proc by their command line: which `envhook <command>` runs (the
// executable, its bundle or the single-file build, whatever Node runs it), for the checks that
// need a daemon running.
import fs from 'node:fs';
import path from 'node:path';

const ENVHOOK = new Set(['envhook', 'envhook.cjs', 'envhook-main.cjs']);

/** Pids of the processes running `envhook <command>`. */
export function envhookPids(root: string, command: string): number[] {
  const proc = path.join(root, 'proc');
  let names: string[];
  try {
    names = fs.readdirSync(proc).filter((n) => /^[0-9]+$/.test(n));
  } catch {
    return [];
  }
  return names.flatMap((pid) => {
    let argv: string[];
    try {
      argv = fs.readFileSync(path.join(proc, pid, 'cmdline'), 'latin1').split('\0');
    } catch {
      return []; // gone meanwhile
    }
    return argv.some((a, i) => ENVHOOK.has(path.basename(a)) && argv[i + 1] === command) ? [Number(pid)] : [];
  });
}
