// CRI-O for install's tests: the double in crio-double.ts (what `crio --version` and `crio config`
// print, computed from the files as CRI-O does) behind a sh wrapper that works with any PATH,
// playing one CRI-O version and recording the arguments of its last run (Node's compile cache on:
// helpers/compile-cache.ts).
import fs from 'node:fs';
import path from 'node:path';
import { REAL_NODE } from './install.ts';
import { COMPILE_CACHE_ENV } from '../compile-cache.ts';

const DOUBLE = path.join(import.meta.dirname, 'crio-double.ts');

export interface CrioDouble {
  bin: string;
  /** The arguments of the last run. */
  args(): string[];
}

/** `crio` in `dir`, playing CRI-O `version`. */
export function crioDouble(dir: string, version = '1.36.3'): CrioDouble {
  const bin = path.join(dir, 'crio');
  const args = path.join(dir, 'crio.args');
  const q = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;
  const cache = Object.entries(COMPILE_CACHE_ENV).map(([k, v]) => `${k}=${q(v)}; export ${k}\n`);
  fs.writeFileSync(
    bin,
    `#!/bin/sh\nprintf '%s\\n' "$@" > ${q(args)}\n${cache.join('')}exec ${q(REAL_NODE)} ${q(DOUBLE)} ${q(version)} "$@"\n`,
    {
      mode: 0o755,
    },
  );
  return { bin, args: () => fs.readFileSync(args, 'utf8').trimEnd().split('\n') };
}
