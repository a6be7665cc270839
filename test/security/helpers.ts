// Shared pieces of the adversarial suite (test/security): canaries, timing, snapshots of files
// that must stay untouched, and a background swapper thread for check-then-open races.
import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import os from 'node:os';
import { spawn } from 'node:child_process';
import { Worker } from 'node:worker_threads';

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
  return { content: fs.readFileSync(file).toString('base64'), uid: st.uid, gid: st.gid, mode: st.mode, mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs };
}

/** Runs `fn`, returning its error (or undefined) and how long it took, in ms. */
export function timed(fn: () => unknown): { err: unknown; ms: number; value: unknown } {
  const start = process.hrtime.bigint();
  let err: unknown;
  let value: unknown;
  try {
    value = fn();
  } catch (e) {
    err = e;
  }
  return { err, value, ms: Number(process.hrtime.bigint() - start) / 1e6 };
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

export const REPO = path.resolve(import.meta.dirname, '../..');

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

/** Runs a command with `input` on stdin; SIGKILL after `timeoutMs`. */
export function runAsync(cmd: string, args: string[], opts: { input?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Promise<CliResult> {
  return new Promise((resolve) => {
    const start = Date.now();
    const child = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'pipe'], env: opts.env ?? process.env });
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
