// Podman with storage, run root and libpod tmpdir of its own (a short temporary directory),
// real runc, cgroupfs and no network, and hooks.d files made from the templates in hooks/
// with `hook.path` pointing at an envhook that exists (a missing path is skipped silently).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { PODMAN, REPO, RUNC } from '../bundle.ts';

export function missingForPodman(): string | undefined {
  if (process.getuid?.() !== 0) return 'needs root';
  if (!PODMAN) return 'podman not installed (apt-get install podman)';
  return undefined;
}

export type HookTemplate = 'envhook-createruntime.json' | 'envhook-precreate.json';

/** DIR/TEMPLATE from hooks/TEMPLATE: hook.path = envhook, log file = logFile, env added. */
export function hooksDir(dir: string, template: HookTemplate, envhook: string, logFile: string, env: string[] = []): string {
  const hook = JSON.parse(fs.readFileSync(path.join(REPO, 'hooks', template), 'utf8'));
  hook.hook.path = envhook;
  hook.hook.args = hook.hook.args.map((a: string) => (a.startsWith('/var/log/envhook/') ? logFile : a));
  hook.hook.env = env;
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, template), JSON.stringify(hook, null, 2));
  return dir;
}

/** pflag reads --annotation as CSV: quote a JSON value so its commas and quotes survive. */
function annotationArg(key: string, value: string): string {
  return `"${`${key}=${value}`.replace(/"/g, '""')}"`;
}

export interface Podman {
  run(opts: {
    hooksDirs: string[];
    annotations: Record<string, string>;
    rootfs: string;
    cmd: string[];
    volumes?: string[];
  }): SpawnSyncReturns<string>;
  cleanup(): void;
}

/** Podman's global options for storage, run root and tmpdir under `dir`: vfs, real runc, cgroupfs. */
export function privatePodman(dir: string): string[] {
  return [
    '--root',
    `${dir}/root`,
    '--runroot',
    `${dir}/run`,
    '--tmpdir',
    `${dir}/tmp`,
    '--storage-driver',
    'vfs',
    '--runtime',
    RUNC!,
    '--cgroup-manager',
    'cgroupfs',
    '--events-backend',
    'file',
  ];
}

/** `podman run` limits this machine's runc can set (it may not raise them: rlimit errors otherwise). */
export const RUN_LIMITS = ['--ulimit', 'nofile=1024:1024', '--ulimit', 'nproc=1024:1024'];

/**
 * `via`: a command that runs podman, which is appended to it (install tests run podman in a
 * private mount namespace that shows an installed root's files at their host paths).
 */
export function makePodman({ via = [] }: { via?: string[] } = {}): Podman {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'envhook-podman-'));
  const global = privatePodman(dir);
  return {
    run({ hooksDirs, annotations, rootfs, cmd, volumes = [] }) {
      const args = [...global, ...hooksDirs.flatMap((d) => ['--hooks-dir', d]), 'run', '--rm', '--net', 'none', ...RUN_LIMITS];
      for (const v of volumes) args.push('--volume', v);
      for (const [k, v] of Object.entries(annotations)) args.push('--annotation', annotationArg(k, v));
      const argv = [PODMAN!, ...args, '--rootfs', rootfs, ...cmd];
      const [bin, ...rest] = [...via, ...argv];
      return spawnSync(bin!, rest, { encoding: 'utf8', timeout: 120_000 });
    },
    cleanup() {
      spawnSync(PODMAN!, [...global, 'rm', '--all', '--force'], { encoding: 'utf8', timeout: 60_000 });
      fs.rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
    },
  };
}
