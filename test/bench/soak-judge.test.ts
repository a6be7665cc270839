// The soak's pure parts (bench/soak-judge.ts): its settings from the environment, the trend
// judgement with its noise bound, the row as a table row and a CSV line, the latency histogram and
// the reader's errno. The soak itself (a private containerd for minutes) is a bench, not a test:
// these keep a broken script from going unseen.
import t from 'tap';
import {
  CSV_COLUMNS,
  csvHeader,
  csvLine,
  judgeRows,
  judgeTrend,
  LatencyHistogram,
  leastSquares,
  percentile,
  readerErrno,
  soakSettings,
  TABLE_HEADER,
  tableRow,
  type SoakRow,
} from '../../bench/soak-judge.ts';

t.test('settings: the defaults are the full node of the bench', async (t) => {
  t.same(soakSettings({}), { pods: 110, minutes: 15, rotateS: 10, killS: 120, churnS: 1, readers: 10, warmup: 3 });
  t.same(soakSettings({ SOAK_PODS: '250', SOAK_MINUTES: '1440' }), {
    pods: 250,
    minutes: 1440,
    rotateS: 10,
    killS: 120,
    churnS: 1,
    readers: 10,
    warmup: 288,
  });
});

t.test('settings: a small run for development', async (t) => {
  const s = soakSettings({ SOAK_PODS: '5', SOAK_MINUTES: '2', SOAK_KILL_S: '0', SOAK_ROTATE_S: '2.5', SOAK_CHURN_S: '' });
  t.same(
    s,
    { pods: 5, minutes: 2, rotateS: 2.5, killS: 0, churnS: 1, readers: 5, warmup: 1 },
    'readers at most the pods; warm-up shorter than the run',
  );
});

t.test('settings: a bad value is one line naming the variable and its range', async (t) => {
  const bad: [Record<string, string>, string][] = [
    [{ SOAK_PODS: 'many' }, 'soak: SOAK_PODS="many": must be a whole number from 1 to 1000'],
    [{ SOAK_PODS: '0' }, 'soak: SOAK_PODS="0": must be a whole number from 1 to 1000'],
    [{ SOAK_PODS: '1.5' }, 'soak: SOAK_PODS="1.5": must be a whole number from 1 to 1000'],
    [{ SOAK_MINUTES: '-3' }, 'soak: SOAK_MINUTES="-3": must be a whole number from 1 to 10080'],
    [{ SOAK_ROTATE_S: '0' }, 'soak: SOAK_ROTATE_S="0": must be a number from 1 to 3600'],
    [{ SOAK_KILL_S: '1e3' }, 'soak: SOAK_KILL_S="1e3": must be a number from 0 to 86400'],
    [{ SOAK_PODS: '5', SOAK_READERS: '6' }, 'soak: SOAK_READERS="6": must be a whole number from 0 to 5'],
    [{ SOAK_MINUTES: '15', SOAK_WARMUP_MIN: '15' }, 'soak: SOAK_WARMUP_MIN="15": must be a whole number from 0 to 14'],
  ];
  for (const [env, line] of bad) t.throws(() => soakSettings(env), { message: line }, JSON.stringify(env));
});

t.test('least squares: slope and its standard error', async (t) => {
  const line = leastSquares([0, 1, 2, 3, 4], [1, 3, 5, 7, 9]);
  t.same(line, { n: 5, slope: 2, se: 0 }, 'an exact line');
  const noisy = leastSquares([1, 2, 3, 4, 5, 6], [10, 12, 10, 12, 10, 12]);
  // x̄ = 3.5, Σ(x−x̄)² = 17.5, Σ(x−x̄)(y−ȳ) = 3, Σ(y−ȳ)² = 6
  t.ok(Math.abs(noisy.slope - 3 / 17.5) < 1e-12, `slope of a sawtooth ${noisy.slope}`);
  t.ok(Math.abs(noisy.se - Math.sqrt((6 - 9 / 17.5) / 4 / 17.5)) < 1e-12, `its standard error ${noisy.se}`);
  t.same(leastSquares([1], [5]), { n: 1, slope: 0, se: 0 }, 'one point: no slope');
});

const minutes = (n: number, from = 4) => Array.from({ length: n }, (_, i) => from + i);

t.test('trend: flat, noise, a quantum over the window, and a leak', async (t) => {
  const ts = minutes(12);
  t.equal(
    judgeTrend(
      ts,
      ts.map(() => 110),
      1,
    ).verdict,
    'flat',
    'a constant count',
  );
  const saw = ts.map((_, i) => 60 + (i % 2 ? 3 : -3));
  const sawTrend = judgeTrend(ts, saw, 1);
  t.equal(sawTrend.verdict, 'flat', `GC sawtooth of ±3 MiB: slope ${sawTrend.slope.toFixed(3)} within ${sawTrend.bound.toFixed(3)}`);
  const step = ts.map((_, i) => (i < 6 ? 110 : 111));
  t.equal(judgeTrend(ts, step, 1).verdict, 'flat', 'one fd more once in the window is within one quantum');
  const leak = ts.map((x) => 25 + x);
  const l = judgeTrend(ts, leak, 1);
  t.equal(l.verdict, 'rising', 'one fd a minute');
  t.equal(l.slope, 1);
  t.ok(Math.abs(l.bound - 1 / 11) < 1e-9, 'the bound of an exact line: one quantum over 11 minutes');
  const slowLeak = ts.map((x, i) => 50 + 0.5 * x + (i % 2 ? 0.2 : -0.2));
  t.equal(judgeTrend(ts, slowLeak, 1).verdict, 'rising', 'half a MiB a minute under 0.2 MiB of noise');
  const down = ts.map((x) => 200 - 2 * x);
  t.equal(judgeTrend(ts, down, 1).verdict, 'flat', 'falling is not a leak');
});

t.test('trend: too few points after warm-up is not judged', async (t) => {
  const tr = judgeTrend([1, 2, 3, 4], [1, 2, 3, 4], 1);
  t.equal(tr.verdict, 'too short');
  t.ok(Number.isNaN(tr.bound));
});

const row = (minute: number, over: Partial<SoakRow> = {}): SoakRow => ({
  minute,
  pods: 110,
  supFds: 24,
  wrkFds: 31,
  supWatches: 0,
  wrkWatches: 110,
  copies: 110,
  copyDirs: 112,
  copyKiB: 1320,
  records: 110,
  supRss: 63.4,
  supAnon: 14.7,
  supPss: 38.0,
  wrkRss: 76.1,
  wrkAnon: 21.6,
  wrkPss: 50.6,
  created: 70,
  adjusted: 73,
  missed: 1,
  evicted: 1,
  kills: 2,
  rotations: 59,
  seen: 21,
  p50: 5.7,
  p99: 377.2,
  reads: 80682,
  failEACCES: 0,
  failENOENT: 0,
  failOther: 0,
  load: 12.79,
  ...over,
});

t.test('rows: CSV and table', async (t) => {
  t.equal(csvHeader().split(',').length, CSV_COLUMNS.length);
  t.same(new Set(CSV_COLUMNS), new Set(Object.keys(row(1))), 'the CSV has every field of a row');
  const line = csvLine(row(1, { wrkFds: Number.NaN }));
  t.equal(line.split(',').length, CSV_COLUMNS.length, 'one field a column');
  t.match(line, /^1\.00,110,24,,0,110,/, 'counts as they are, a missing figure empty');
  t.match(line, /,63\.40,14\.70,38\.00,76\.10,/, 'fractions with two decimals');
  const cells = (l: string) => l.split('|').length;
  const header = TABLE_HEADER.split('\n');
  t.equal(cells(tableRow(row(1))), cells(header[0]!), 'a table row has the header’s columns');
  t.equal(cells(header[1]!), cells(header[0]!));
  t.match(tableRow(row(2, { failEACCES: 2, failOther: 1 })), '| EACCES 2, ENOENT 0, other 1 |', 'failures by errno');
  t.match(tableRow(row(2, { seen: 0 })), '| – |', 'no latency without a rewrite seen');
});

t.test('rows: judged after warm-up only', async (t) => {
  // the heap's first growth over six minutes, then flat: flat after a warm-up of 6, rising without one
  const rows = Array.from({ length: 15 }, (_, i) => row(i + 1, { wrkRss: i < 6 ? 40 + 4 * i : 62 + (i % 2) * 0.5 }));
  const rss = (w: number) => judgeRows(rows, w).find((x) => x.key === 'wrkRss')!.trend;
  t.equal(rss(6).verdict, 'flat');
  t.equal(rss(6).n, 9, 'the rows after minute 6');
  t.equal(rss(0).verdict, 'rising');
  t.equal(judgeRows(rows, 3).length, 14, 'fds, watches, copies, records and memory of both processes');
  rows[8]!.wrkFds = Number.NaN; // the worker gone at that instant
  const fds = judgeRows(rows, 3).find((x) => x.key === 'wrkFds')!.trend;
  t.same([fds.n, fds.slope, fds.verdict], [11, 0, 'flat'], 'a figure not taken is left out, not a NaN slope');
});

t.test('latencies: percentiles of a sorted list and of the histogram', async (t) => {
  t.equal(percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 50), 6);
  t.equal(percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 99), 10);
  t.ok(Number.isNaN(percentile([], 50)));
  const h = new LatencyHistogram();
  t.ok(Number.isNaN(h.percentile(50)), 'empty');
  for (let i = 1; i <= 100; i++) h.add(i);
  h.add(1e9);
  t.equal(h.count, 101);
  t.equal(h.percentile(50), 51);
  t.equal(h.percentile(100), 60_000, 'above a minute: the last bucket');
});

t.test("the reader's failed reads by errno (busybox sh's lines)", async (t) => {
  t.equal(readerErrno("sh: can't open '/keys/key': Permission denied"), 'EACCES');
  t.equal(readerErrno("sh: can't open '/keys/gen': No such file or directory"), 'ENOENT');
  t.equal(readerErrno("sh: can't open '/keys/gen': Stale file handle"), 'other');
});
