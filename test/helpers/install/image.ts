// envhook's image built as a user without a registry builds it (scripts/image-context.ts and
// Containerfile.scratch: `FROM scratch`, no base image to pull), under a Podman whose storage,
// run root and tmpdir are a temporary directory of the test's (vfs, real runc, cgroupfs), so
// nothing is shared with another Podman on the machine. The single executable is the one
// `npm run build` made (npm test builds it first): it is reused, never rebuilt here.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { PODMAN, REPO, RUNC } from '../bundle.ts';
import { missingForPodman, privatePodman, RUN_LIMITS } from '../shim/podman.ts';
import { writeImageContext } from '../../../scripts/image-context.ts';

const IMAGE = 'localhost/envhook:test';

/** Why the image cannot be built here, or undefined. */
export function missingForImage(): string | undefined {
  const podman = missingForPodman();
  if (podman) return podman;
  if (!RUNC) return 'runc not installed (apt-get install runc)';
  if (!fs.existsSync(path.join(REPO, 'dist/envhook')))
    return 'dist/envhook not built (npm run build makes it unless ENVHOOK_NO_SEA is set)';
  return undefined;
}

interface ImageRun {
  /** podman run options: volumes, network, user... (each its own argv word). */
  options?: string[];
  /** Replaces the image's ENTRYPOINT (a Kubernetes `command`). */
  entrypoint?: string[];
  /** Appended to the entrypoint (a Kubernetes `args`), or the image's CMD when absent. */
  args?: string[];
}

export interface BuiltImage {
  dir: string;
  /** Image path → the host file its bytes came from (the executable, hooks/, the libraries). */
  files: Map<string, string>;
  /** Seconds `podman build` took. */
  buildSeconds: number;
  podman(args: string[], timeout?: number): SpawnSyncReturns<string>;
  /** `podman image inspect`: the image's config (Entrypoint, Cmd, Env...). */
  config(): { Entrypoint?: string[]; Cmd?: string[]; Env?: string[]; Labels?: Record<string, string> };
  /** Every path in the image's filesystem (regular files and symlinks; directories with a trailing /). */
  paths(): string[];
  /** Runs a container to its end (--rm). */
  run(r: ImageRun): SpawnSyncReturns<string>;
  /** Starts a detached container; returns its name. */
  start(name: string, r: ImageRun): string;
  /** What a container wrote so far, stdout and stderr apart (`podman logs`). */
  logs(name: string): { stdout: string; stderr: string };
  /** PID of a running container's process, as the host sees it. */
  pid(name: string): number;
  cleanup(): void;
}

function runArgs(r: ImageRun): string[] {
  const entry = r.entrypoint ? ['--entrypoint', JSON.stringify(r.entrypoint)] : [];
  return [...RUN_LIMITS, ...(r.options ?? []), ...entry, IMAGE, ...(r.args ?? [])];
}

export function buildImage(): BuiltImage {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'envhook-image-'));
  const global = privatePodman(dir);
  const podman = (args: string[], timeout = 120_000) =>
    spawnSync(PODMAN!, [...global, ...args], { encoding: 'utf8', timeout, maxBuffer: 64 << 20 });
  const cleanup = () => {
    podman(['rm', '--all', '--force', '--time', '0'], 60_000);
    podman(['rmi', '--all', '--force'], 60_000);
    fs.rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
  };
  const context = path.join(dir, 'context');
  let files: Map<string, string>;
  let buildSeconds: number;
  try {
    files = writeImageContext(context);
    const started = performance.now();
    const b = podman(['build', '--quiet', '--tag', IMAGE, context], 300_000);
    buildSeconds = (performance.now() - started) / 1000;
    if (b.status !== 0) throw new Error(`podman build failed (${b.status ?? b.signal}): ${b.stderr}`);
  } catch (err) {
    cleanup();
    throw err;
  }
  // The context is a second copy of every byte: only the image's storage is needed from here.
  fs.rmSync(context, { recursive: true, force: true });
  return {
    dir,
    files,
    buildSeconds,
    podman,
    config() {
      const r = podman(['image', 'inspect', '--format', '{{json .Config}}', IMAGE]);
      if (r.status !== 0) throw new Error(`podman image inspect: ${r.stderr}`);
      return JSON.parse(r.stdout);
    },
    paths() {
      // What a container of the image holds, read from its exported filesystem.
      const name = `envhook-paths-${process.pid}`;
      const c = podman(['create', '--name', name, IMAGE]);
      if (c.status !== 0) throw new Error(`podman create: ${c.stderr}`);
      try {
        const tar = path.join(dir, 'export.tar');
        const e = podman(['export', '--output', tar, name]);
        if (e.status !== 0) throw new Error(`podman export: ${e.stderr}`);
        const list = spawnSync('tar', ['-tf', tar], { encoding: 'utf8', maxBuffer: 16 << 20 });
        fs.rmSync(tar);
        return list.stdout
          .split('\n')
          .filter(Boolean)
          .map((p) => `/${p.replace(/^\.?\//, '')}`);
      } finally {
        podman(['rm', '--force', name]);
      }
    },
    run(r) {
      return podman(['run', '--rm', ...runArgs(r)]);
    },
    start(name, r) {
      const s = podman(['run', '--detach', '--name', name, ...runArgs(r)]);
      if (s.status !== 0) throw new Error(`podman run ${name}: ${s.stderr}`);
      return name;
    },
    logs(name) {
      const r = podman(['logs', name]);
      return { stdout: r.stdout, stderr: r.stderr };
    },
    pid(name) {
      const r = podman(['inspect', '--format', '{{.State.Pid}}', name]);
      const pid = Number(r.stdout.trim());
      if (r.status !== 0 || !(pid > 0)) throw new Error(`podman inspect ${name}: no PID (${r.stderr.trim() || r.stdout.trim()})`);
      return pid;
    },
    cleanup,
  };
}

/** A process's resident memory from /proc (VmRSS, RssAnon), in KiB. */
export function residentKiB(pid: number): { vmRss: number; rssAnon: number } {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(status)?.[1]);
  return { vmRss: field('VmRSS'), rssAnon: field('RssAnon') };
}
