// The runtime's own log file (runc --log, --log-format): containerd reads the last
// `"level":"error"` line of it and reports that message to the kubelet, so a failed create
// is explained there and not only on a stderr nobody keeps. Written in the file's format:
// a JSON line for --log-format json (what containerd passes), logrus text otherwise.
import fs from 'node:fs';

export function runcLogLine(message: string, format: string | undefined, now = new Date()): string {
  const time = now.toISOString().replace(/\.\d+Z$/, 'Z');
  if (format === 'json') return JSON.stringify({ level: 'error', msg: message, time }) + '\n';
  return `time=${JSON.stringify(time)} level=error msg=${JSON.stringify(message)}\n`;
}

/** Best effort: a log file we cannot write must not hide the error itself (stderr has it). */
export function appendRuncLog(file: string | undefined, format: string | undefined, message: string): void {
  if (!file) return;
  try {
    fs.appendFileSync(file, runcLogLine(message, format), { mode: 0o644 });
  } catch {
    /* stderr carries the same line */
  }
}
