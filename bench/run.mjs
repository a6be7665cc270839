// npm run bench: the start-path benchmarks. Prints the tables and writes
// bench/RESULTS.md. Fixtures live under bench/out/ (ignored by git). BENCH_RUNS=N for more runs.
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { RUNS, machine, loadavg } from './harness.mjs';
import { setBundleBase } from './fixtures.mjs';
import { NODE, REPO } from './cli.mjs';
import { startup, injectTypical, passThrough, runThroughShim } from './rows.mjs';
import { scale, FACTORS } from './scale.mjs';
import { execRows } from './exec.mjs';
import { criRows } from './cri.mjs';
import { nriRow, nriSection } from './nri.mjs';
import { nriWatchRow, nriWatchSection } from './nri-watch.mjs';
import { keptSections } from './sections.mjs';

const work = path.join(REPO, 'bench/out');
fs.rmSync(work, { recursive: true, force: true });
fs.mkdirSync(work, { recursive: true });
// Bundles on tmpfs, as containerd's and CRI-O's are (fixtures.mjs); pod directories on disk.
const bundles = fs.mkdtempSync(path.join(process.env.BENCH_BUNDLE_DIR ?? '/dev/shm', 'envhook-bench-'));
setBundleBase(bundles);
process.on('exit', () => fs.rmSync(bundles, { recursive: true, force: true }));
const fsType = (dir) => {
  try {
    return execFileSync('stat', ['-f', '-c', '%T', dir], { encoding: 'utf8' }).trim();
  } catch {
    return 'unknown';
  }
};

const CRI_START = '<!-- row 7: CRI -->';
const CRI_END = '<!-- end of row 7 -->';
const f1 = (x) => (x === undefined ? '–' : x.toFixed(1));
const signed = (x) => (Number.isNaN(x) ? '–' : `${x >= 0 ? '+' : ''}${f1(x)}`);
const table = (head, rows) =>
  [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');

// Judged on the wall-clock median (the issue's figure); the CPU Δ is shown beside it because
// it hardly moves with the load of the shared machine.
function verdict(r) {
  if (!r.target) return '';
  const ok = r.ms - r.baseMs <= r.target.addMs;
  const cpuOk = r.cpu - r.baseCpu <= r.target.addMs;
  const cpu = r.cpu === undefined ? '' : ` (CPU: ${cpuOk ? 'met' : 'NOT met'})`;
  return `≤ +${r.target.addMs} ms: ${ok ? 'met' : 'NOT met'}${cpu}`;
}

function mainTable(rows) {
  const body = rows.map((r) =>
    r.skip
      ? [r.case, `skipped: ${r.skip}`, '', '', '', '', '', '', '', '', '']
      : [
          r.case,
          r.subject,
          f1(r.ms),
          r.baseline,
          f1(r.baseMs),
          signed(r.ms - r.baseMs),
          `${(r.ms / r.baseMs).toFixed(2)}×`,
          verdict(r),
          f1(r.cpu),
          signed(r.cpu - r.baseCpu),
          r.load,
        ],
  );
  return table(['case', 'subject', 'median ms', 'baseline', 'baseline ms', 'Δ ms', 'ratio', 'target', 'CPU ms', 'Δ CPU ms', 'load'], body);
}

function scaleTable(rows) {
  const body = rows.map((r, i) => {
    if (r.skip) return [r.dimension, `skipped: ${r.skip}`, '', '', '', '', '', '', '', ''];
    const prev = rows[i - 1];
    const slope = r.factor === FACTORS[0] || prev?.skip ? '' : f1((r.ms - prev.ms) / (r.factor - prev.factor));
    const ratio = r.ms / r.floorMs;
    const cpu = `${f1(r.cpu)} / ${f1(r.floorCpu)}`;
    const cpuRatio = r.cpu / r.floorCpu;
    return [
      r.dimension,
      `${r.factor}× (${r.size})`,
      f1(r.ms),
      f1(r.floorMs),
      `${ratio.toFixed(2)}×${ratio <= 2 ? '' : ' (> 2×)'}`,
      slope,
      `${cpu} (${cpuRatio.toFixed(2)}×)`,
      f1(r.rss),
      f1(r.floorRss),
      r.load,
    ];
  });
  return table(
    [
      'work',
      'size',
      'envhook ms',
      'floor ms',
      'ratio (target ≤ 2×)',
      'ms per extra 1×',
      'CPU ms envhook / floor',
      'envhook RSS MiB',
      'floor RSS MiB',
      'load',
    ],
    body,
  );
}

// Row 4's targets: linear growth (the 10×→100× slope no steeper than 1.5 times the 1×→10×
// one, so no superlinear term; where 1×→10× is within run-to-run noise, taken as 5% of the 1×
// run, that noise over the 9 steps stands in for it) and within 2× of the floor at 100×, where
// the work dominates Node's start-up.
function scaleVerdicts(rows) {
  const out = [];
  for (const dim of [...new Set(rows.map((r) => r.dimension))]) {
    const [a, b, c] = rows.filter((r) => r.dimension === dim);
    if (!a || !b || !c || a.skip) continue;
    const s1 = (b.ms - a.ms) / (b.factor - a.factor);
    const s2 = (c.ms - b.ms) / (c.factor - b.factor);
    const linear = s2 <= 1.5 * Math.max(s1, (0.05 * a.ms) / (b.factor - a.factor));
    const ratio = c.ms / c.floorMs;
    const cpuRatio = c.cpu / c.floorCpu;
    out.push(
      `- 4 ${dim}: growth ${linear ? 'linear: met' : 'NOT linear'} (${f1(s1)} then ${f1(s2)} ms per extra 1×); ` +
        `at 100× ${ratio.toFixed(2)}× the floor: ${ratio <= 2 ? 'met' : 'NOT met'} (CPU ${cpuRatio.toFixed(2)}×: ${cpuRatio <= 2 ? 'met' : 'NOT met'})`,
    );
  }
  return out;
}

function verdicts(rows, scaled) {
  const out = rows
    .filter((r) => r.target && !r.skip)
    .map(
      (r) =>
        `- ${r.case}, ${r.subject}: Δ ${signed(r.ms - r.baseMs)} ms${r.cpu === undefined ? '' : `, CPU Δ ${signed(r.cpu - r.baseCpu)} ms`}: ${verdict(r)}`,
    );
  return [...out, ...scaleVerdicts(scaled)].join('\n');
}

const m = machine(NODE);
// Wall-clock figures from a loaded machine are not worth much: say so in the results.
function busy() {
  const load = Math.max(Number(m.load), Number(loadavg()));
  const cpus = Number(m.cpu.match(/× (\d+)/)?.[1] ?? 1);
  return load > cpus / 2
    ? `\n\n**Warning: load average ${load.toFixed(2)} on ${cpus} CPUs: the machine was busy; wall-clock figures are noisy, prefer the CPU columns.**`
    : '';
}
console.error(`envhook bench: ${RUNS} runs a figure, medians; ${m.cpu}; ${m.kernel}; node ${m.node}`);
// BENCH_ONLY=1,3,4 runs only those rows (while iterating; the results file says which ran).
const only = process.env.BENCH_ONLY?.split(',');
const want = (n) => !only || only.includes(String(n));
const rows = [];
for (const [n, row] of [
  [5, startup],
  [1, injectTypical],
  [2, passThrough],
  [3, runThroughShim],
  [6, execRows],
]) {
  if (!want(n)) continue;
  const out = row(work);
  for (const r of out)
    console.error(
      r.skip ? `  ${r.case}: skipped, ${r.skip}` : `  ${r.case}: ${r.subject} ${f1(r.ms)} ms vs ${r.baseline} ${f1(r.baseMs)} ms`,
    );
  rows.push(...out);
}
// Row 7 talks gRPC to a containerd: asynchronous, after the others, in a section of its own.
const criLoad = loadavg();
const cri = want(7) ? await criRows() : [];
for (const r of cri)
  console.error(
    r.skip ? `  ${r.case}: skipped, ${r.skip}` : `  ${r.case}: ${r.subject} ${f1(r.ms)} ms vs ${r.baseline} ${f1(r.baseMs)} ms`,
  );
const criSection = `${CRI_START}
## CRI (row 7): the kubelet's calls, envhook handler against the plain runc handler

Measured on ${new Date().toISOString().replace(/\.\d+Z$/, 'Z')} (load average ${criLoad} at start, ${loadavg()} at end) on one private
${cri[0]?.containerd ?? 'containerd 1.6'} with the CRI plugin, over gRPC as the kubelet calls it; the
handlers interleaved in the same run, ${RUNS} timed calls each, median wall time per call (CPU is not attributed per call: the
work is spread over containerd, its shims, runc and envhook). The "floor" rows of 7a and 7b time a
third handler whose runtime is a two-line sh script that only execs runc: the cost of any sh
front before it reads anything. Method: bench/README.md, row 7.

${verdicts(cri, [])}

${mainTable(cri)}
${CRI_END}`;
const scaled = want(4) ? scale(work) : [];
const nri = want(8) ? nriSection(await nriRow()) : '';
const nriWatch = want(9) ? nriWatchSection(await nriWatchRow()) : '';
const text = `# envhook benchmark results

Generated by \`npm run bench\` (bench/run.mjs) on ${m.date}. Every figure is the median of
${RUNS} runs, each measured interleaved with its baseline in the same run; NODE_EXTRA_CA_CERTS
unset. Δ is the median minus the baseline's median. CPU ms is the mean user + system time of
the child (from the 10 ms ticks of /proc/self/stat, so fair as a mean only): it moves far less
than wall time when the machine is busy.${busy()}

- Machine: ${m.cpu}; ${m.kernel}
- Node: ${m.node} (node_modules/node/bin/node); ${m.runc}
- Load average (1 min) at start / end: ${m.load} / ${loadavg()}
- Bundles (config.json) on ${fsType(bundles)} (as containerd's /run/containerd), pod directories on ${fsType(work)}

## Targets

${verdicts(rows, scaled)}

## Start path

${mainTable(rows)}

## Scale (row 4): inject at 1×, 10×, 100× against the floor of the same work

Floor: \`node bench/floor.mjs\` (read, JSON.parse, stringify, atomic write of config.json) for
the env rows, \`chown -R\` on the same volume tree for the projected volume. Linear growth shows
as a steady "ms per extra 1×". RSS: peak resident set (GNU time), median of 5.

${scaleTable(scaled)}
${nri ? `\n${nri}` : ''}${nriWatch ? `\n${nriWatch}` : ''}`;
const results = path.join(REPO, 'bench/RESULTS.md');
const previous = fs.existsSync(results) ? fs.readFileSync(results, 'utf8') : '';
// bench/watch.ts owns the section from its marker to the end: keep it.
const watchAt = previous.indexOf('<!-- bench/watch.ts -->');
const watchSection = watchAt >= 0 ? `\n${previous.slice(watchAt)}` : '';
// bench/cri-nri.mjs (row 10) and bench/nri-restart.mjs (row 11) own their marked sections: keep them too.
const ownSections = keptSections(previous);
if (only && only.every((n) => n === '7')) {
  // Row 7 alone: replace its section in the last full results, keep the other rows' figures.
  const at = previous.indexOf(CRI_START);
  const end = previous.indexOf(CRI_END);
  fs.writeFileSync(
    results,
    at >= 0 && end > at
      ? previous.slice(0, at) + criSection + previous.slice(end + CRI_END.length)
      : `${previous.trimEnd()}\n\n${criSection}\n`,
  );
  console.log(criSection);
} else {
  fs.writeFileSync(results, `${text}${want(7) ? `\n${criSection}\n` : ''}${ownSections}${watchSection}`);
  console.log(text);
}
