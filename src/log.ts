// Structured log (pino, JSON lines) to the configured file only: stdout belongs to runc and
// to the precreate protocol, stderr to the one-line error. Never log values: log names,
// paths, counts and error causes (see serializeCause).
import pino from 'pino';
import { serializeCause } from './errors.ts';

export type Logger = pino.Logger;
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export function createLogger(file: string | undefined, level: LogLevel = 'info'): Logger {
  if (!file) return pino({ level: 'silent' });
  // Synchronous destination: the process execs the runtime or exits right after logging.
  const dest = pino.destination({ dest: file, sync: true, append: true, mkdir: true });
  return pino({ level, base: { pid: process.pid }, serializers: { err: (e) => serializeCause(e) } }, dest);
}

export const silentLogger: Logger = pino({ level: 'silent' });
