// An executable on PATH, as a shell would find it, and what its `--version` says (for the
// runtimes' own binaries, which install asks for their version and their reading of the
// configuration).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { EnvhookError } from '../errors.ts';

export function onPath(name: string, envPath = process.env.PATH ?? ''): string | undefined {
  for (const dir of envPath.split(':')) {
    const p = path.join(dir || '.', name);
    try {
      fs.accessSync(p, fs.constants.X_OK);
      if (fs.statSync(p).isFile()) return p;
    } catch {
      /* not here */
    }
  }
  return undefined;
}

/** The match of `pattern` in what `bin --version` prints; exiting non-zero or no match is an error naming `what`. */
export function versionMatch(bin: string, what: string, pattern: RegExp): RegExpExecArray {
  const r = spawnSync(bin, ['--version'], { encoding: 'utf8', timeout: 30_000 });
  const m = pattern.exec(r.stdout ?? '');
  if (r.status !== 0 || !m)
    throw new EnvhookError(`${bin} --version did not print a ${what} version (exit ${r.status ?? r.signal ?? r.error?.message})`);
  return m;
}
