// "Both CPUs busy" for the watcher's benchmark and reader tests: one spinning busybox shell per
// CPU beside the processes being measured, as a node whose CPUs are all taken. stop() kills
// exactly the processes it started. They always run in the ordinary policy (chrt -o 0 where
// chrt is installed): a parent in SCHED_FIFO (the bench's watcher) must not pass it on.
import fs from 'node:fs';
import os from 'node:os';
import { spawn } from 'node:child_process';

const BUSYBOX = ['/bin/busybox', '/usr/bin/busybox'].find((p) => fs.existsSync(p));
const CHRT = ['/usr/bin/chrt', '/bin/chrt'].find((p) => fs.existsSync(p));

/** `argv` to spawn in the ordinary scheduling policy whatever the parent's. */
export function ordinary(argv: string[]): [string, string[]] {
  return CHRT ? [CHRT, ['-o', '0', ...argv]] : [argv[0]!, argv.slice(1)];
}

export function startBurners(count = os.cpus().length): () => void {
  if (BUSYBOX === undefined) throw new Error('busybox is needed for the CPU burners');
  const [cmd, args] = ordinary([BUSYBOX, 'sh', '-c', 'while :; do :; done']);
  const kids = Array.from({ length: count }, () => spawn(cmd, args, { stdio: 'ignore' }));
  return () => {
    for (const k of kids) k.kill('SIGKILL');
  };
}
