// Runs env files through real bash, in batches: a `bash --posix` process sources each file in
// a subshell of its own, `( set -a; . FILE; exec env -0 )`, so hundreds of files take a second
// or two; a few such processes share the files, because a fork and an exec wait on a busy
// machine's scheduler far longer than they run. The variables bash exports by itself (found by
// sourcing an empty file first: PWD, SHLVL, _ …) are left out of every result.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';

export interface Sourced {
  status: number;
  stderr: string;
  vars: Map<string, Buffer>;
}

function which(cmd: string): string | undefined {
  try {
    return execFileSync('sh', ['-c', `command -v ${cmd}`], { encoding: 'utf8' }).trim() || undefined;
  } catch {
    return undefined;
  }
}
export const BASH = which('bash');
const ENV = which('env');
const execFileAsync = promisify(execFile);

function parseEnv0(out: Buffer): Map<string, Buffer> {
  const vars = new Map<string, Buffer>();
  let start = 0;
  for (let end = out.indexOf(0, start); end >= 0; start = end + 1, end = out.indexOf(0, start)) {
    const eq = out.indexOf(0x3d, start);
    vars.set(out.subarray(start, eq).toString('latin1'), out.subarray(eq + 1, end));
  }
  return vars;
}

async function withDir<T>(files: Uint8Array[], fn: (paths: string[]) => T | Promise<T>): Promise<T> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'envhook-bash-'));
  try {
    const paths = ['', ...files].map((_, i) => path.join(dir, `f${i}`));
    [new Uint8Array(0), ...files].forEach((bytes, i) => fs.writeFileSync(paths[i]!, bytes));
    return await fn(paths);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function withoutBaseline(results: Sourced[]): { baseline: string[]; results: Sourced[] } {
  const base = results.shift()!;
  for (const r of results) for (const name of base.vars.keys()) r.vars.delete(name);
  return { baseline: [...base.vars.keys()].sort(), results };
}

/** How many bash processes share a batch. */
const SHARES = 4;

/** Source every file in a subshell of a bash process, with an empty environment (plus LC_ALL if given). */
export function sourceAll(files: Uint8Array[], locale?: string): Promise<{ baseline: string[]; results: Sourced[] }> {
  if (!BASH || !ENV) throw new Error('bash or env not found');
  const script = `for f do ( set -a; . "$f"; exec '${ENV}' -0 ) >"$f.out" 2>"$f.err"; echo $? >"$f.rc"; done`;
  return withDir(files, async (paths) => {
    const shares = Array.from({ length: SHARES }, (_, k) => paths.filter((_, i) => i % SHARES === k)).filter((share) => share.length > 0);
    await Promise.all(
      shares.map((share) =>
        execFileAsync(ENV, ['-i', ...(locale ? [`LC_ALL=${locale}`] : []), BASH, '--posix', '--norc', '-c', script, 'bash', ...share], {
          timeout: 120_000,
        }),
      ),
    );
    return withoutBaseline(
      paths.map((p) => ({
        status: Number(fs.readFileSync(`${p}.rc`, 'utf8')),
        stderr: fs.readFileSync(`${p}.err`, 'utf8'),
        vars: parseEnv0(fs.readFileSync(`${p}.out`)),
      })),
    );
  });
}

/** The literal command, one bash process a file: to check that the batch changes nothing. */
export function sourceEach(files: Uint8Array[]): Promise<{ baseline: string[]; results: Sourced[] }> {
  if (!BASH || !ENV) throw new Error('bash or env not found');
  return withDir(files, (paths) =>
    withoutBaseline(
      paths.map((p) => {
        const run = spawnSync(ENV, ['-i', `PATH=${path.dirname(ENV)}`, BASH, '--posix', '--norc', '-c', `set -a; . ${p}; env -0`], {
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        return { status: run.status ?? -1, stderr: run.stderr.toString(), vars: parseEnv0(run.stdout) };
      }),
    ),
  );
}
