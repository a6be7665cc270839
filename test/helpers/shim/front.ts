// Runs the sh front hooks/envhook-runtime against fake executables that print who they are
// and their argv (one word a line), so the front's dispatch can be checked without runc.
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { builtCli, NODE, REPO } from '../bundle.ts';

export const FRONT = path.join(REPO, 'hooks/envhook-runtime');

/** An executable sh script at `file` that prints `name` then its arguments, one a line. */
export function fakeExecutable(file: string, name: string, extra = ''): string {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `#!/bin/sh\n${extra}printf '%s\\n' ${name} "$@"\n`, { mode: 0o755 });
  return file;
}

export interface FrontRun extends SpawnSyncReturns<string> {
  /** stdout split into lines, without the trailing empty one. */
  lines: string[];
}

/** `SHELL FRONT ARGV` with only PATH from our environment, plus `env` (name ENVHOOK_CONFIG there). */
export function runFront(argv: string[], env: NodeJS.ProcessEnv, opts: { shell?: string[]; front?: string; cwd?: string } = {}): FrontRun {
  const [sh, ...shArgs] = opts.shell ?? ['/bin/sh'];
  const r = spawnSync(sh!, [...shArgs, opts.front ?? FRONT, ...argv], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH, ...env },
    cwd: opts.cwd,
    timeout: 30_000,
  });
  return Object.assign(r, { lines: r.stdout ? r.stdout.replace(/\n$/, '').split('\n') : [] });
}

/**
 * `DIR/envhook`: runs this checkout's built CLI (dist/envhook.cjs) on its Node 24, for runtimes
 * that call envhook themselves (the front's ENVHOOK_BIN, hooks.d `hook.path`).
 */
export function envhookWrapper(dir: string): string {
  const file = path.join(dir, 'envhook');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(file, `#!/bin/sh\nexec ${JSON.stringify(NODE)} ${JSON.stringify(builtCli())} "$@"\n`, {
    mode: 0o755,
  });
  return file;
}

/**
 * `DIR/counting-envhook`: appends one line to `DIR/calls` per call (its argv), then runs this
 * checkout's envhook (dist/envhook.cjs, or with `built` the single executable dist/envhook; with
 * `counterOnly` nothing): proof that the front started Node, or did not (no line).
 */
export function countingEnvhook(
  dir: string,
  opts: { built?: boolean; counterOnly?: boolean } = {},
): { bin: string; calls: () => string[] } {
  // The single executable starts fastest, for tables of many calls (`npm test` builds it first).
  // counterOnly: no envhook at all, for checks of the front's own decision only.
  const sea = path.join(REPO, 'dist/envhook');
  const real = opts.counterOnly ? 'true' : opts.built && fs.existsSync(sea) ? sea : envhookWrapper(path.join(dir, 'real'));
  const calls = path.join(dir, 'calls');
  const bin = path.join(dir, 'counting-envhook');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(bin, `#!/bin/sh\nprintf '%s\\n' "$*" >>${JSON.stringify(calls)}\nexec ${JSON.stringify(real)} "$@"\n`, { mode: 0o755 });
  return { bin, calls: () => (fs.existsSync(calls) ? fs.readFileSync(calls, 'utf8').split('\n').filter(Boolean) : []) };
}
