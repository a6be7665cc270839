// The reader test of the owner watcher (docs/ownership.md): a container process (UID 1000) reads 0400
// files of atomic-writer volumes in a loop while the test rewrites the volumes with the
// kubelet's operations, then goes on reading after the churn. busy box sh's `read` builtin is
// one open(2) a read, no fork. Each phase is its own reader: it marks /ctl/<phase>.started,
// reads until /ctl/<phase>.settled (during the churn: every failure counted, per file), then
// until /ctl/<phase>.stop (after it), and writes its counts to /ctl/<phase>.result.
// A failed read is EACCES (the file was root's 0400 when `..data` pointed at it) or ENOENT (the
// directory `..data` pointed at was removed during the open: the kubelet removes it at once).
import type { Test } from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { startBurners } from '../../../scripts/cpu-burners.ts';
import { findChrt } from '../../../src/nri/realtime.ts';
import { sleep, waitFor } from '../wait.ts';

/**
 * The reader's shell script for files (container paths) in phase `phase`; with `reasons`, each
 * failed read's error line goes to /ctl/<phase>.err (counted by reason: ReaderResult.failReasons),
 * for tests that expect none (a line a failure: millions where every read fails).
 */
export function readerScript(files: readonly string[], phase: string, reasons = false): string {
  const during = files.map((f, k) => `if read -r l < ${f}; then ok=$((ok+1)); else fail=$((fail+1)); f${k}=$((f${k}+1)); fi`).join('; ');
  const after = files.map((f) => `if read -r l < ${f}; then lok=$((lok+1)); else lfail=$((lfail+1)); fi`).join('; ');
  const zero = files.map((_f, k) => `f${k}=0`).join('; ');
  const byFile = files.map((_f, k) => `$f${k}`).join(',');
  return [
    `ok=0; fail=0; lok=0; lfail=0; ${zero}; : > /ctl/${phase}.started`,
    `{ while [ ! -e /ctl/${phase}.settled ]; do ${during}; done; while [ ! -e /ctl/${phase}.stop ]; do ${after}; done; } 2>${reasons ? `>/ctl/${phase}.err` : '/dev/null'}`,
    `echo "ok=$ok fail=$fail byfile=${byFile} after: ok=$lok fail=$lfail uid=$(id -u)" > /ctl/${phase}.result.tmp`,
    `mv /ctl/${phase}.result.tmp /ctl/${phase}.result`,
  ].join('; ');
}

export interface ReaderResult {
  /** Reads during the churn, failures among them, and failures per file (the script's order). */
  ok: number;
  fail: number;
  failByFile: number[];
  /** With readerScript's `reasons`: the failed reads by reason (EACCES, ENOENT, or the shell's own words), during and after the churn. */
  failReasons: Record<string, number>;
  /** Reads after the churn. */
  afterOk: number;
  afterFail: number;
  uid: number;
  seconds: number;
  /** Rewrites not yet owned 10 ms after the swap (the test waited for them), and never owned. */
  waited: number;
  neverOwned: number;
}

export interface ChurnOptions {
  /** The host directory mounted at /ctl (writable by the reader). */
  ctl: string;
  phase: string;
  rewrites: number;
  /** Both CPUs busy (scripts/cpu-burners.ts) during the churn. */
  busy: boolean;
  /** Rewrite i (the kubelet's operations). */
  rewrite(i: number): void;
  /** Every file of every rewritten volume carries its owner (and, where the test checks it, the rewrite's content). */
  owned(): boolean;
  /** How long a rewrite may take to be owned before it counts as never owned. Default 5000 ms. */
  ownedWithinMs?: number;
}

const INTERVAL_MS = 10; // about 100 rewrites a second (less when a rewrite waits for its owner)

/** Runs the churn against a reader already started with readerScript(…, o.phase); returns its counts. */
export async function churnWithReader(o: ChurnOptions): Promise<ReaderResult> {
  const mark = (what: string) => path.join(o.ctl, `${o.phase}.${what}`);
  await waitFor(() => fs.existsSync(mark('started')), 60_000, `reader ${o.phase} up`);
  let waited = 0;
  let neverOwned = 0;
  const started = Date.now();
  const stop = o.busy ? startBurners() : () => {};
  try {
    for (let i = 1; i <= o.rewrites; i++) {
      o.rewrite(i);
      await sleep(INTERVAL_MS);
      if (o.owned()) continue;
      waited++;
      await waitFor(o.owned, o.ownedWithinMs ?? 5000, `rewrite ${i} owned`).catch(() => neverOwned++);
    }
  } finally {
    stop();
  }
  const seconds = (Date.now() - started) / 1000;
  await sleep(200);
  fs.writeFileSync(mark('settled'), '');
  await sleep(500);
  fs.writeFileSync(mark('stop'), '');
  await waitFor(() => fs.existsSync(mark('result')), 60_000, `reader ${o.phase} result`);
  const text = fs.readFileSync(mark('result'), 'utf8');
  const m = /ok=(\d+) fail=(\d+) byfile=([\d,]+) after: ok=(\d+) fail=(\d+) uid=(\d+)/.exec(text);
  if (!m) throw new Error(`reader ${o.phase}: unexpected result ${JSON.stringify(text)}`);
  return {
    ok: +m[1]!,
    fail: +m[2]!,
    failByFile: m[3]!.split(',').map(Number),
    failReasons: failReasons(fs.existsSync(mark('err')) ? fs.readFileSync(mark('err'), 'utf8') : ''),
    afterOk: +m[4]!,
    afterFail: +m[5]!,
    uid: +m[6]!,
    seconds,
    waited,
    neverOwned,
  };
}

const REASONS: Record<string, string> = { 'Permission denied': 'EACCES', 'no such file': 'ENOENT', 'No such file or directory': 'ENOENT' };

/** The reader's error lines (busybox sh: `sh: can't open '/keys/key': Permission denied`) counted by reason. */
function failReasons(text: string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const said = /: ([^:]+)$/.exec(line)?.[1] ?? line;
    const reason = REASONS[said] ?? said;
    counts[reason] = (counts[reason] ?? 0) + 1;
  }
  return counts;
}

/** One line for the test's output and the report. */
export function describeReader(what: string, r: ReaderResult, files: readonly string[]): string {
  const reads = r.ok + r.fail;
  const per = files.map((f, k) => `${path.basename(f)} ${r.failByFile[k]}`).join(', ');
  return `${what}: ${reads} reads in ${r.seconds.toFixed(1)} s, ${r.fail} failed (${((1e4 * r.fail) / Math.max(reads, 1)).toFixed(
    2,
  )} in 10,000; by file: ${per}; by reason: ${JSON.stringify(r.failReasons)}); after the churn ${r.afterOk} ok, ${r.afterFail} failed; ${r.waited} rewrites not yet owned 10 ms after the swap`;
}

/**
 * The four phases of a reader test, in order: quiet and both CPUs busy, at the ordinary priority,
 * then in SCHED_FIFO (skipped, with one comment, without chrt). `run` gets each phase's flags.
 */
export async function eachPhase(t: Test, run: (busy: boolean, fifo: boolean) => Promise<void>): Promise<void> {
  for (const [busy, fifo] of [
    [false, false],
    [true, false],
    [false, true],
    [true, true],
  ] as const) {
    const missing = fifo && fifoMissing();
    if (missing) {
      t.comment(`SCHED_FIFO runs skipped: ${missing}`);
      return;
    }
    await run(busy, fifo);
  }
}

/** What every phase asserts: each rewrite ended owned, and once the churn settled the reader reads and never fails. */
export function checkSettled(t: Test, label: string, r: ReaderResult, rewrites: number): void {
  t.equal(r.neverOwned, 0, `${label}: every one of ${rewrites} rewrites ended owned by 1000`);
  t.ok(r.afterOk > 0, `${label}: after the churn the reader reads`);
  t.equal(r.afterFail, 0, `${label}: and never fails`);
}

const CHRT = findChrt();

/** Why the SCHED_FIFO runs are skipped, or false. */
const fifoMissing = (): string | false => (CHRT ? false : 'chrt (util-linux) not installed');

/** `<content>:<owner uid>` of a file as a reader finds it, or '' while it cannot be read. */
export function contentAndOwner(file: string): string {
  try {
    return `${fs.readFileSync(file, 'utf8')}:${fs.statSync(file).uid}`;
  } catch {
    return '';
  }
}
