// The soak's pure parts (bench/soak.mjs): its settings from the environment, the least-squares
// trend with the noise bound it is judged against, and the per-minute row as a Markdown table row
// and a CSV line. No I/O here, so that test/bench/soak-judge.test.ts checks them in CI while the
// soak itself (minutes of a private containerd) stays a bench.

export interface SoakSettings {
  /** Pods at once (SOAK_PODS). */
  pods: number;
  /** Length of the measured part, after every pod is up (SOAK_MINUTES). */
  minutes: number;
  /** Each pod's owned secret volume rewritten every this many seconds (SOAK_ROTATE_S). */
  rotateS: number;
  /** The worker SIGKILLed every this many seconds; 0: never (SOAK_KILL_S). */
  killS: number;
  /** One pod removed and created again every this many seconds; 0: no churn (SOAK_CHURN_S). */
  churnS: number;
  /** Pods with a UID-1000 reader container (SOAK_READERS, at most SOAK_PODS). */
  readers: number;
  /** Minutes left out of the trend judgement at the start (SOAK_WARMUP_MIN). */
  warmup: number;
}

interface Bound {
  name: string;
  min: number;
  max: number;
  whole: boolean;
}

const BOUNDS: Record<Exclude<keyof SoakSettings, 'readers' | 'warmup'>, Bound> = {
  pods: { name: 'SOAK_PODS', min: 1, max: 1000, whole: true },
  minutes: { name: 'SOAK_MINUTES', min: 1, max: 7 * 24 * 60, whole: true },
  rotateS: { name: 'SOAK_ROTATE_S', min: 1, max: 3600, whole: false },
  killS: { name: 'SOAK_KILL_S', min: 0, max: 86_400, whole: false },
  churnS: { name: 'SOAK_CHURN_S', min: 0, max: 3600, whole: false },
};

function read(env: Record<string, string | undefined>, b: Bound, dflt: number): number {
  const text = env[b.name];
  if (text === undefined || text.trim() === '') return dflt;
  const n = Number(text);
  const kind = b.whole ? 'a whole number' : 'a number';
  if (!/^\s*\d+(\.\d+)?\s*$/.test(text) || !Number.isFinite(n) || (b.whole && !Number.isInteger(n)) || n < b.min || n > b.max) {
    throw new Error(`soak: ${b.name}=${JSON.stringify(text)}: must be ${kind} from ${b.min} to ${b.max}`);
  }
  return n;
}

/** The soak's settings from the environment; a bad value throws one line naming the variable and its range. */
export function soakSettings(env: Record<string, string | undefined>): SoakSettings {
  const pods = read(env, BOUNDS.pods, 110);
  const minutes = read(env, BOUNDS.minutes, 15);
  const readers = read(env, { name: 'SOAK_READERS', min: 0, max: pods, whole: true }, Math.min(10, pods));
  // A fifth of the run (at least 2 minutes) is warm-up: the worker's first kills, the heap's first growth.
  const warmup = read(
    env,
    { name: 'SOAK_WARMUP_MIN', min: 0, max: minutes - 1, whole: true },
    Math.min(minutes - 1, Math.max(2, Math.round(minutes / 5))),
  );
  return {
    pods,
    minutes,
    rotateS: read(env, BOUNDS.rotateS, 10),
    killS: read(env, BOUNDS.killS, 120),
    churnS: read(env, BOUNDS.churnS, 1),
    readers,
    warmup,
  };
}

export interface Fit {
  n: number;
  /** Units per minute. */
  slope: number;
  /** Standard error of the slope (0 with fewer than 3 points). */
  se: number;
}

/** Ordinary least squares of y on x, with the slope's standard error. */
export function leastSquares(xs: readonly number[], ys: readonly number[]): Fit {
  const n = Math.min(xs.length, ys.length);
  if (n < 2) return { n, slope: 0, se: 0 };
  let mx = 0;
  let my = 0;
  for (let i = 0; i < n; i++) {
    mx += xs[i]!;
    my += ys[i]!;
  }
  mx /= n;
  my /= n;
  let sxx = 0;
  let sxy = 0;
  for (let i = 0; i < n; i++) {
    sxx += (xs[i]! - mx) ** 2;
    sxy += (xs[i]! - mx) * (ys[i]! - my);
  }
  if (sxx === 0) return { n, slope: 0, se: 0 };
  const slope = sxy / sxx;
  let sse = 0;
  for (let i = 0; i < n; i++) sse += (ys[i]! - my - slope * (xs[i]! - mx)) ** 2;
  const se = n > 2 ? Math.sqrt(sse / (n - 2) / sxx) : 0;
  return { n, slope, se };
}

/** Fewer points than this after warm-up: no trend is judged (the verdict says so). */
export const MIN_POINTS = 5;
/** Standard errors a slope may be above 0 and still be noise (one-sided, about 99.5% for 10 degrees of freedom). */
export const K_SE = 3;

export interface Trend extends Fit {
  /** The slope above which the series rises: K_SE standard errors plus one quantum over the window. */
  bound: number;
  verdict: 'flat' | 'rising' | 'too short';
}

/**
 * The trend of a series after warm-up: rising when its least-squares slope exceeds
 * K_SE·SE(slope) + quantum / window, where `quantum` is the smallest change that means anything
 * for the series (one fd, one watch, one copy, one record, 1 MiB of memory, one 4 KiB page of a
 * copy) and window the minutes the points span: a series that moves by less than one quantum over
 * the whole window, or whose slope is within its own scatter, is flat.
 */
export function judgeTrend(ts: readonly number[], ys: readonly number[], quantum: number): Trend {
  const fit = leastSquares(ts, ys);
  const span = ts.length > 1 ? ts[ts.length - 1]! - ts[0]! : 0;
  if (fit.n < MIN_POINTS || span <= 0) return { ...fit, bound: Number.NaN, verdict: 'too short' };
  const bound = K_SE * fit.se + quantum / span;
  return { ...fit, bound, verdict: fit.slope > bound ? 'rising' : 'flat' };
}

/** One minute of the soak (bench/soak.mjs samples it). Memory in MiB, latencies in ms. */
export interface SoakRow {
  minute: number;
  pods: number;
  supFds: number;
  wrkFds: number;
  supWatches: number;
  wrkWatches: number;
  copies: number;
  copyDirs: number;
  copyKiB: number;
  records: number;
  supRss: number;
  supAnon: number;
  supPss: number;
  wrkRss: number;
  wrkAnon: number;
  wrkPss: number;
  created: number;
  adjusted: number;
  missed: number;
  evicted: number;
  kills: number;
  rotations: number;
  seen: number;
  p50: number;
  p99: number;
  reads: number;
  failEACCES: number;
  failENOENT: number;
  failOther: number;
  load: number;
}

/** The CSV's columns: every field of a row, in this order. */
export const CSV_COLUMNS: readonly (keyof SoakRow)[] = [
  'minute',
  'pods',
  'supFds',
  'wrkFds',
  'supWatches',
  'wrkWatches',
  'copies',
  'copyDirs',
  'copyKiB',
  'records',
  'supRss',
  'supAnon',
  'supPss',
  'wrkRss',
  'wrkAnon',
  'wrkPss',
  'created',
  'adjusted',
  'missed',
  'evicted',
  'kills',
  'rotations',
  'seen',
  'p50',
  'p99',
  'reads',
  'failEACCES',
  'failENOENT',
  'failOther',
  'load',
];

const num = (x: number, digits = 0) => (Number.isFinite(x) ? x.toFixed(digits) : '');

export function csvHeader(): string {
  return CSV_COLUMNS.join(',');
}

/** Columns with a fraction (minutes, MiB, ms, load): two decimals; the rest are counts. */
const FRACTIONS = new Set<keyof SoakRow>(['minute', 'supRss', 'supAnon', 'supPss', 'wrkRss', 'wrkAnon', 'wrkPss', 'p50', 'p99', 'load']);

/** One CSV line: numbers only (a missing figure, NaN, is an empty field). */
export function csvLine(r: SoakRow): string {
  return CSV_COLUMNS.map((k) => num(r[k], FRACTIONS.has(k) ? 2 : 0)).join(',');
}

export const TABLE_HEADER = [
  '| min | pods | fds sup / wrk | inotify watches sup / wrk | copies (dirs, KiB) | records | VmRSS sup / wrk MiB | RssAnon sup / wrk MiB | Pss sup / wrk MiB | created / adjusted / missed / evicted | kills | rewrites / seen by readers | seen p50 / p99 ms | reads | reader failures | load |',
  '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
].join('\n');

/** One Markdown table row of TABLE_HEADER. */
export function tableRow(r: SoakRow): string {
  const fails = r.failEACCES + r.failENOENT + r.failOther;
  const failText = fails === 0 ? '0' : `EACCES ${r.failEACCES}, ENOENT ${r.failENOENT}, other ${r.failOther}`;
  const lat = r.seen > 0 ? `${num(r.p50)} / ${num(r.p99)}` : '–';
  return `| ${num(r.minute, 1)} | ${r.pods} | ${r.supFds} / ${r.wrkFds} | ${r.supWatches} / ${r.wrkWatches} | ${r.copies} (${r.copyDirs}, ${num(r.copyKiB)}) | ${r.records} | ${num(r.supRss, 1)} / ${num(r.wrkRss, 1)} | ${num(r.supAnon, 1)} / ${num(r.wrkAnon, 1)} | ${num(r.supPss, 1)} / ${num(r.wrkPss, 1)} | ${r.created} / ${r.adjusted} / ${r.missed} / ${r.evicted} | ${r.kills} | ${r.rotations} / ${r.seen} | ${lat} | ${r.reads} | ${failText} | ${num(r.load, 2)} |`;
}

/** The series judged for a trend, with the quantum of each (judgeTrend). */
export const TREND_SERIES: readonly { key: keyof SoakRow; what: string; quantum: number; unit: string }[] = [
  { key: 'supFds', what: 'open fds, supervisor', quantum: 1, unit: 'fds' },
  { key: 'wrkFds', what: 'open fds, worker', quantum: 1, unit: 'fds' },
  { key: 'supWatches', what: 'inotify watches, supervisor', quantum: 1, unit: 'watches' },
  { key: 'wrkWatches', what: 'inotify watches, worker', quantum: 1, unit: 'watches' },
  { key: 'copies', what: 'owned copies', quantum: 1, unit: 'copies' },
  { key: 'copyDirs', what: 'directories of owned copies', quantum: 1, unit: 'dirs' },
  { key: 'copyKiB', what: 'owned copies on disk', quantum: 4, unit: 'KiB' },
  { key: 'records', what: 'records in the run directory', quantum: 1, unit: 'records' },
  { key: 'supRss', what: 'VmRSS, supervisor', quantum: 1, unit: 'MiB' },
  { key: 'supAnon', what: 'RssAnon, supervisor', quantum: 1, unit: 'MiB' },
  { key: 'supPss', what: 'Pss, supervisor', quantum: 1, unit: 'MiB' },
  { key: 'wrkRss', what: 'VmRSS, worker', quantum: 1, unit: 'MiB' },
  { key: 'wrkAnon', what: 'RssAnon, worker', quantum: 1, unit: 'MiB' },
  { key: 'wrkPss', what: 'Pss, worker', quantum: 1, unit: 'MiB' },
];

/** Each series of TREND_SERIES judged over the rows after `warmup` minutes (a row without the figure left out). */
export function judgeRows(rows: readonly SoakRow[], warmup: number): { key: keyof SoakRow; what: string; unit: string; trend: Trend }[] {
  const after = rows.filter((r) => r.minute > warmup);
  return TREND_SERIES.map((s) => {
    // a figure not taken (the worker gone at that instant: NaN) is left out of its series
    const taken = after.filter((r) => Number.isFinite(r[s.key]));
    const trend = judgeTrend(
      taken.map((r) => r.minute),
      taken.map((r) => r[s.key]),
      s.quantum,
    );
    return { key: s.key, what: s.what, unit: s.unit, trend };
  });
}

/** The p-th percentile (0..100) of an ascending array, NaN when empty. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** busybox sh's error line for a failed read (`sh: can't open '/keys/key': Permission denied`) as an errno name. */
export function readerErrno(line: string): 'EACCES' | 'ENOENT' | 'other' {
  if (/Permission denied/.test(line)) return 'EACCES';
  if (/No such file or directory|no such file/.test(line)) return 'ENOENT';
  return 'other';
}

/** Latencies in 1 ms buckets up to a minute (and one bucket above): a day's samples in fixed memory. */
export class LatencyHistogram {
  readonly #buckets = new Uint32Array(60_001);
  count = 0;

  add(ms: number): void {
    const i = Math.min(this.#buckets.length - 1, Math.max(0, Math.round(ms)));
    this.#buckets[i]!++;
    this.count++;
  }

  /** The p-th percentile (0..100) in ms, to the bucket; NaN when empty. */
  percentile(p: number): number {
    if (this.count === 0) return Number.NaN;
    const rank = Math.min(this.count - 1, Math.floor((p / 100) * this.count));
    let seen = 0;
    for (let i = 0; i < this.#buckets.length; i++) {
      seen += this.#buckets[i]!;
      if (seen > rank) return i;
    }
    return this.#buckets.length - 1;
  }
}
