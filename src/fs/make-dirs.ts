// `mkdir -p`, without Node's recursive mkdir: where mkdir fails with ENOENT under a parent that
// exists (a directory in /proc or /sys), `fs.mkdirSync(dir, { recursive: true })` never returns
// (Node 24), and a daemon given such a --run-dir would hang at its start instead of saying why.
import fs from 'node:fs';
import path from 'node:path';

/** Creates `dir` and its missing parents with `mode`; a directory already there is fine. Throws the system error otherwise. */
export function makeDirs(dir: string, mode: number): void {
  try {
    fs.mkdirSync(dir, { mode });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return;
    const parent = path.dirname(dir);
    if (code !== 'ENOENT' || parent === dir) throw err;
    makeDirs(parent, mode);
    try {
      fs.mkdirSync(dir, { mode });
    } catch (again) {
      if ((again as NodeJS.ErrnoException).code !== 'EEXIST') throw again;
    }
  }
}
