// The private containerd of the NRI benchmarks (rows 11 and 13), with envhook's settings file
// (debug log, status file) beside it, and its log as they read it: the timestamp containerd
// stamps on a line, and the log file read as it grows, so that polling it costs nothing in a
// figure taken between two of containerd's own stamps.
import fs from 'node:fs';
import path from 'node:path';
import { prepareCriContainerd } from '../test/helpers/cri/containerd.ts';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** containerd's timestamp of a log line, epoch ms with its sub-millisecond digits. */
export function containerdTime(line) {
  const m = line.match(/^time="([^".]+)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)"/);
  if (!m) throw new Error(`no timestamp in containerd's line: ${line.slice(0, 80)}`);
  return Date.parse(`${m[1]}${m[3]}`) + Number(`0.${m[2] ?? '0'}`) * 1000;
}

/** A file read as it grows: whole lines. */
export function tail(file) {
  let pos = 0;
  let rest = '';
  return {
    /** The index the next line will have. */
    mark() {
      this.read();
      return this.lines.length;
    },
    lines: [],
    read() {
      const fd = fs.openSync(file, 'r');
      const buf = Buffer.alloc(1 << 16);
      for (;;) {
        const n = fs.readSync(fd, buf, 0, buf.length, pos);
        if (n === 0) break;
        pos += n;
        rest += buf.subarray(0, n).toString('utf8');
      }
      fs.closeSync(fd);
      const parts = rest.split('\n');
      rest = parts.pop();
      this.lines.push(...parts);
    },
    /** The first line from `index` on that matches, polling until `ms`. */
    async wait(re, index, ms = 30_000, what = String(re)) {
      const end = Date.now() + ms;
      for (;;) {
        this.read();
        for (let i = index; i < this.lines.length; i++) if (re.test(this.lines[i])) return { line: this.lines[i], i };
        if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
        await sleep(5);
      }
    },
  };
}

/** A started containerd `version` with NRI on; envhook's settings file, its log and status file. */
export async function nriBenchContainerd(version) {
  const c = prepareCriContainerd({ version, nri: true, tmpBase: process.env.BENCH_BUNDLE_DIR ?? '/dev/shm' });
  await c.start();
  const runDir = path.join(c.dir, 'run');
  const envhookLog = path.join(c.dir, 'envhook.log');
  fs.writeFileSync(envhookLog, '');
  const config = path.join(c.dir, 'envhook-bench.json');
  const settings = {
    kubeletRoot: path.join(c.dir, 'kubelet'),
    runDir,
    nriSocket: c.paths.nriSocket,
    logFile: envhookLog,
    logLevel: 'debug',
  };
  fs.writeFileSync(config, JSON.stringify(settings) + '\n');
  const statusFile = path.join(runDir, 'nri-status.json');
  const status = () => {
    try {
      return JSON.parse(fs.readFileSync(statusFile, 'utf8'));
    } catch {
      return undefined;
    }
  };
  return { c, ctrdLog: tail(c.paths.log), ehLog: tail(envhookLog), config, statusFile, status };
}
