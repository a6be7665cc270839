// Shared pieces of the adversarial suite (test/security): canaries, outcomes, process runs, snapshots of files
// that must stay untouched, and a background swapper thread for check-then-open races.
import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import os from 'node:os';
import { spawn } from 'node:child_process';
import { Worker } from 'node:worker_threads';
import { untapped } from '../helpers/untapped.ts';
import { makePod } from '../../scripts/kubelet-pod.ts';

/** A recognizable random string that must never show up in any output. */
export function makeCanary(tag = 'CANARY'): string {
  return `${tag}${crypto.randomBytes(9).toString('hex')}`;
}

/** Everything about a file an attacker might want changed: bytes, owner, group, mode, times. */
export interface FileSnapshot {
  content: string;
  uid: number;
  gid: number;
  mode: number;
  mtimeMs: number;
  ctimeMs: number;
}

export function snapshot(file: string): FileSnapshot {
  const st = fs.lstatSync(file);
  return {
    content: fs.readFileSync(file).toString('base64'),
    uid: st.uid,
    gid: st.gid,
    mode: st.mode,
    mtimeMs: st.mtimeMs,
    ctimeMs: st.ctimeMs,
  };
}

/** Runs `fn`, returning its value or its error. */
export function outcome(fn: () => unknown): { err: unknown; value: unknown } {
  let err: unknown;
  let value: unknown;
  try {
    value = fn();
  } catch (e) {
    err = e;
  }
  return { err, value };
}

/**
 * A thread that keeps replacing `<dir>/<name>` with each of `sources` in turn: `{ link: file }`
 * is hard-linked under a temporary name and renamed over `name`, `{ content }` written to a new
 * file under a temporary name and renamed over it, `{ symlink: target }` is
 * created under a temporary name and renamed over it (each state appears atomically);
 * `{ dir: d }` (directories cannot be hard-linked) is renamed to `name` and back.
 */
export type SwapSource = { link: string } | { content: string } | { symlink: string } | { dir: string };

export function startSwapper(dir: string, name: string, sources: SwapSource[]): { stop: () => Promise<number> } {
  const code = `
    const fs = require('node:fs');
    const path = require('node:path');
    const { workerData, parentPort } = require('node:worker_threads');
    const { dir, name, sources } = workerData;
    const target = path.join(dir, name);
    const flag = new Int32Array(workerData.flag);
    let n = 0;
    while (Atomics.load(flag, 0) === 0) {
      for (let i = 0; i < sources.length; i++) {
        const s = sources[i];
        const tmp = path.join(dir, '.swap-' + i);
        try {
          if (s.link) { fs.linkSync(s.link, tmp); fs.renameSync(tmp, target); }
          else if (s.content !== undefined) { fs.writeFileSync(tmp, s.content); fs.renameSync(tmp, target); }
          else if (s.symlink) { fs.symlinkSync(s.symlink, tmp); fs.renameSync(tmp, target); }
          else if (s.dir) { try { fs.unlinkSync(target); } catch {} fs.renameSync(s.dir, target); fs.renameSync(target, s.dir); }
          n++;
        } catch { try { fs.rmSync(tmp, { force: true }); } catch {} }
      }
    }
    parentPort.postMessage(n);
  `;
  const flag = new SharedArrayBuffer(4);
  const worker = new Worker(code, { eval: true, workerData: { dir, name, sources, flag } });
  const done = new Promise<number>((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  return {
    async stop() {
      Atomics.store(new Int32Array(flag), 0, 1);
      const n = await done;
      await worker.terminate();
      return n;
    },
  };
}

/** Lists leftover temporary files of an atomic write in a bundle directory. */
export function tempFiles(bundle: string): string[] {
  return fs.readdirSync(bundle).filter((n) => n.includes('.envhook-'));
}

const REPO = path.resolve(import.meta.dirname, '../..');

/** Runs `jobs` with at most `parallel` at once (the suite targets 2 cores). */
export async function pool<T>(jobs: (() => Promise<T>)[], parallel = 2): Promise<T[]> {
  const out: T[] = new Array(jobs.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < jobs.length) {
        const i = next++;
        out[i] = await jobs[i]!();
      }
    }),
  );
  return out;
}

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  out: string;
  err: string;
  ms: number;
}

export const CLI = path.join(REPO, 'dist/envhook.cjs');
export const NODE24 = path.join(REPO, 'node_modules/.bin/node');

/** Runs a command with `input` on stdin, without tap's loader (helpers/untapped.ts); SIGKILL after `timeoutMs`. */
export function runAsync(
  cmd: string,
  args: string[],
  opts: { input?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): Promise<CliResult> {
  return new Promise((resolve) => {
    const start = Date.now();
    const child = spawn(...untapped(cmd, args), { stdio: ['pipe', 'pipe', 'pipe'], env: opts.env ?? process.env });
    let out = '';
    let err = '';
    child.stdout!.on('data', (d) => (out += d));
    child.stderr!.on('data', (d) => (err += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 30_000);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, out, err, ms: Date.now() - start });
    });
    child.stdin!.on('error', () => undefined);
    child.stdin!.end(opts.input ?? '');
  });
}

/** The bundled CLI on Node 24: `node dist/envhook.cjs ARGS`. */
export function envhookCli(args: string[], opts: { input?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Promise<CliResult> {
  return runAsync(NODE24, [CLI, ...args], opts);
}

/** A fresh directory on tmpfs when there is one (fast for thousands of small files). */
export function fastTempDir(prefix: string): string {
  return fs.mkdtempSync(fs.existsSync('/dev/shm') ? `/dev/shm/${prefix}` : path.join(os.tmpdir(), prefix));
}

export const FRONT = path.join(REPO, 'hooks/envhook-runtime');

/**
 * A pod-backed bundle for the runtime entry points (shim, hook, precreate), which find volumes
 * only through the kubelet-made mounts: the kubelet-like pod (scripts/kubelet-pod.ts) under `<dir>/kubelet`, emptyDir `cfg` holding
 * `app.env`, a fake real runtime `<dir>/bin/runc` that records its argv in `<dir>/ran`.
 */
export interface RuntimeBundle {
  dir: string;
  bundle: string;
  config: string;
  kubeletRoot: string;
  runtime: string;
  ran: string;
  runcLog: string;
  pinoLog: string;
  /** Environment for the front and the shim: real runtime, kubelet root, debug log. */
  env: NodeJS.ProcessEnv;
}

export function runtimeBundle(
  dir: string,
  envFile: Buffer | string,
  annotations: Record<string, string>,
  podUid = '0f0e0d0c-aaaa-bbbb-cccc-000000000001',
): RuntimeBundle {
  const kubeletRoot = path.join(dir, 'kubelet');
  const pod = makePod(kubeletRoot, { emptyDirs: { cfg: { 'app.env': envFile } } }, podUid);
  const bundle = path.join(dir, 'bundle');
  fs.mkdirSync(bundle, { recursive: true });
  const spec = {
    ociVersion: '1.0.2',
    process: { args: ['sh'], env: ['PATH=/bin', 'KUBERNETES_SERVICE_HOST=10.0.0.1', 'DB_SERVICE_HOST=10.0.0.2'] },
    root: { path: 'rootfs' },
    mounts: pod.mounts('app'),
    annotations: { ...pod.annotations('app'), ...annotations },
  };
  const config = path.join(bundle, 'config.json');
  fs.writeFileSync(config, JSON.stringify(spec, null, '\t'));
  const ran = path.join(dir, 'ran');
  const runtime = path.join(dir, 'bin/runc');
  fs.mkdirSync(path.dirname(runtime), { recursive: true });
  fs.writeFileSync(runtime, `#!/bin/sh\nprintf '%s\\n' "$@" > '${ran}'\n`, { mode: 0o755 });
  const pinoLog = path.join(dir, 'envhook.log');
  return {
    dir,
    bundle,
    config,
    kubeletRoot,
    runtime,
    ran,
    runcLog: path.join(dir, 'runc-log.json'),
    pinoLog,
    env: {
      PATH: process.env.PATH,
      ENVHOOK_RUNTIME: runtime,
      ENVHOOK_KUBELET_ROOT: kubeletRoot,
      // The shim's owners records in the test's directory, not the host's /run/envhook.
      ENVHOOK_RUN_DIR: path.join(dir, 'run'),
      ENVHOOK_LOG_FILE: pinoLog,
      ENVHOOK_LOG_LEVEL: 'debug',
    },
  };
}

/** containerd's way of calling the runtime: `FRONT --root R --log L --log-format json create --bundle B ID`. */
export function frontCreate(b: RuntimeBundle, id = 'c1'): Promise<CliResult> {
  return runAsync(
    '/bin/sh',
    [
      FRONT,
      '--root',
      path.join(b.dir, 'runc-root'),
      '--log',
      b.runcLog,
      '--log-format',
      'json',
      'create',
      '--bundle',
      b.bundle,
      '--pid-file',
      path.join(b.dir, 'pid'),
      id,
    ],
    { env: b.env },
  );
}

/** `envhook hook` with the container state on stdin. */
export function hookRun(b: RuntimeBundle, state?: string): Promise<CliResult> {
  return envhookCli(['hook', '--kubelet-root', b.kubeletRoot, '--log-file', b.pinoLog, '--log-level', 'debug'], {
    input: state ?? JSON.stringify({ ociVersion: '1.0.2', id: 'c1', status: 'creating', pid: 1, bundle: b.bundle }),
  });
}

/** `envhook precreate` with config.json on stdin. */
export function precreateRun(b: RuntimeBundle, config?: string): Promise<CliResult> {
  return envhookCli(['precreate', '--kubelet-root', b.kubeletRoot, '--log-file', b.pinoLog, '--log-level', 'debug'], {
    input: config ?? fs.readFileSync(b.config, 'utf8'),
  });
}

export function readIf(file: string): string {
  return fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
}
