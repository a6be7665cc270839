// Timing harness: commands are run interleaved (baseline and subjects in turn, the order
// rotating every round) so that drift on a busy machine hits all of them alike; each figure is
// the median of the rounds. Children get the environment without NODE_EXTRA_CA_CERTS (Node
// reads that file at start-up).
import { spawnSync, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const RUNS = Math.max(20, Number(process.env.BENCH_RUNS) || 21);
const WARMUP = 3;

export const benchEnv = { ...process.env };
delete benchEnv.NODE_EXTRA_CA_CERTS;

/** A command: argv, optional `prepare()` run untimed before every run, optional env. */
export function cmd(label, argv, opts = {}) {
  return { label, argv, prepare: opts.prepare, env: { ...benchEnv, ...opts.env } };
}

/**
 * CPU time (user + system) of reaped children so far, in ms, from /proc/self/stat. It moves in
 * 10 ms ticks, so one run's figure is coarse, but the mean over many runs is fair and, unlike
 * wall time, hardly moves when the machine is busy.
 */
function childCpuMs() {
  const fields = fs.readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
  return ((Number(fields[13]) + Number(fields[14])) * 1000) / 100;
}

function runOnce(c) {
  c.prepare?.();
  const cpu0 = childCpuMs();
  const t0 = process.hrtime.bigint();
  const r = spawnSync(c.argv[0], c.argv.slice(1), { env: c.env, stdio: ['ignore', 'ignore', 'pipe'] });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  c.cpu = (c.cpu ?? 0) + childCpuMs() - cpu0;
  if (r.status !== 0) {
    const err = r.error?.code ?? r.stderr?.toString().trim().split('\n').pop();
    throw new Error(`${c.label}: ${c.argv.join(' ')} exited ${r.status}: ${err}`);
  }
  return ms;
}

export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** The p-th percentile (0..100) of an ascending `sorted`: its ⌊p/100·n⌋-th element, the last for p = 100. */
export function percentileOfSorted(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** Times [baseline, ...subjects] interleaved; returns medians in ms, and mean CPU ms as `cpu`. */
export function measure(commands, runs = RUNS) {
  for (let i = 0; i < WARMUP; i++) for (const c of commands) runOnce(c);
  const times = commands.map(() => []);
  for (const c of commands) c.cpu = 0;
  for (let i = 0; i < runs; i++) {
    for (let k = 0; k < commands.length; k++) {
      const j = (i + k) % commands.length;
      times[j].push(runOnce(commands[j]));
    }
  }
  const out = Object.fromEntries(commands.map((c, j) => [c.label, median(times[j])]));
  out.cpu = Object.fromEntries(commands.map((c) => [c.label, c.cpu / runs]));
  return out;
}

/** Peak RSS in MiB of one run (GNU time's %M), median of 5; undefined without /usr/bin/time. */
export function peakRss(c) {
  if (!fs.existsSync('/usr/bin/time')) return undefined;
  const out = path.join(os.tmpdir(), `envhook-bench-rss-${process.pid}`);
  const kb = [];
  for (let i = 0; i < 5; i++) {
    c.prepare?.();
    execFileSync('/usr/bin/time', ['-f', '%M', '-o', out, ...c.argv], { env: c.env, stdio: 'ignore' });
    kb.push(Number(fs.readFileSync(out, 'utf8').trim().split('\n').pop()));
  }
  fs.rmSync(out, { force: true });
  return median(kb) / 1024;
}

export function machine(node) {
  const sh = (file, args) => {
    try {
      return execFileSync(file, args, { encoding: 'utf8' }).trim();
    } catch {
      return 'n/a';
    }
  };
  const cpu = fs.readFileSync('/proc/cpuinfo', 'utf8').match(/^model name\s*:\s*(.*)$/m)?.[1] ?? os.cpus()[0]?.model;
  return {
    cpu: `${cpu} × ${os.availableParallelism()} (nproc)`,
    kernel: `${os.type()} ${os.release()} ${os.machine()}`,
    node: sh(node, ['--version']),
    runc: sh('runc', ['--version']).split('\n')[0],
    date: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
    load: loadavg(),
  };
}

/** 1-minute load average: wall-clock medians are only as good as the machine is quiet. */
export function loadavg() {
  return os.loadavg()[0].toFixed(2);
}

/** True while the process `pid` exists. */
export function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Polls `check` every 10 ms until it holds; throws "timed out: <what>" after `ms`. */
export async function until(check, what, ms = 30_000) {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
