// Structured log (pino, JSON lines) to the configured file: stdout belongs to runc and to the
// precreate protocol, stderr to the one-line error. The resident daemons (`envhook nri`) log to
// stderr when no file is configured, so `kubectl logs` and the journal show them. Never log
// values: log names, paths, counts and error causes (see serializeCause).
//
// Start-up: pino is loaded only when there is somewhere to log. Without it, the logger is a
// no-op object and pino is never evaluated (it costs several ms of every container start).
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import type pino from 'pino';
import { escapeUnseen, serializeCause } from './errors.ts';
import { fileAccess } from './fs/file-group.ts';

export type Logger = pino.Logger;
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface LoggerOptions {
  /** Without a file, log to stderr (the daemons) instead of nowhere (the per-container commands). */
  stderr?: boolean;
  /** The setting fileGroup: the log file 0640 with this group (fs/file-group.ts) instead of 0600. */
  fileGroup?: string | undefined;
}

export function createLogger(file: string | undefined, level: LogLevel = 'info', opts: LoggerOptions = {}): Logger {
  if ((!file && !opts.stderr) || level === 'silent') return silentLogger;
  const pino = loadPino();
  // Synchronous destination: the process execs the runtime or exits right after logging, and a
  // daemon's line is on disk (or in the pipe) before the next request.
  const dest = pino.destination({ dest: file ? openLogFile(file, fileAccess(opts.fileGroup)) : 2, sync: true });
  return pino(
    { level, base: { pid: process.pid }, serializers: { err: (e) => serializeCause(e) }, formatters: { log: (o) => escapeFields(o) } },
    dest,
  );
}

/**
 * The log file, opened for appending (its directory made where missing, as pino's `mkdir` did):
 * created 0600 (0640 with the admin's fileGroup), and a regular file that allows more (0644, an
 * older envhook's) narrowed to it. The lines name pods, volumes and files (never a value), root's
 * to read. Anything else (a FIFO, /dev/stderr, a terminal) is used as it is.
 */
function openLogFile(file: string, access: { mode: number; gid: number | undefined }): number {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const fd = fs.openSync(file, fs.constants.O_WRONLY | fs.constants.O_APPEND | fs.constants.O_CREAT, access.mode);
  try {
    const st = fs.fstatSync(fd);
    if (st.isFile()) {
      if (access.gid !== undefined && st.gid !== access.gid) fs.fchownSync(fd, -1, access.gid);
      if ((st.mode & 0o777 & ~access.mode) !== 0 || (access.gid !== undefined && (st.mode & 0o777) !== access.mode))
        fs.fchmodSync(fd, access.mode);
    }
  } catch (err) {
    fs.closeSync(fd);
    throw err;
  }
  return fd;
}

/**
 * A log line's fields with every string escaped as errors are (errors.ts, escapeUnseen): a field
 * may carry what a pod author wrote (a `path`, a file name of a volume), and JSON leaves bidi
 * and other format characters raw. Plain objects and arrays only, a few levels deep; `err` goes
 * through its own serializer (serializeCause, escaped there).
 */
function escapeFields(o: Record<string, unknown>, depth = 0): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) out[k] = escapeValue(v, depth);
  return out;
}

function escapeValue(v: unknown, depth: number): unknown {
  if (typeof v === 'string') return escapeUnseen(v);
  if (depth >= 4 || v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) return v.map((x) => escapeValue(x, depth + 1));
  if (Object.getPrototypeOf(v) !== Object.prototype) return v;
  return escapeFields(v as Record<string, unknown>, depth + 1);
}

/**
 * In the esbuild bundle `require` exists and esbuild resolves this literal `require('pino')` to
 * the bundled copy, evaluated on first call only. Run from source (ESM, type stripping) there is
 * no `require`, so one is made for this file.
 */
function loadPino(): typeof pino {
  if (typeof require === 'function') return require('pino') as typeof pino;
  return createRequire(import.meta.url)('pino') as typeof pino;
}

const noop = (): void => {};

/** A logger that drops everything, without loading pino. Implements what envhook calls. */
export const silentLogger: Logger = {
  level: 'silent',
  fatal: noop,
  error: noop,
  warn: noop,
  info: noop,
  debug: noop,
  trace: noop,
  silent: noop,
  flush: noop,
  isLevelEnabled: () => false,
  bindings: () => ({}),
  child(): Logger {
    return silentLogger;
  },
} as unknown as Logger;
