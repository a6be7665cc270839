// Before/after of one change in figures that move less with the load of a shared machine than
// wall time (on a 2-CPU machine at load 12, `node -e 0` took 650 ms wall): user-space
// instructions (`perf stat -e instructions:u`) where the CPU counts them, else CPU time
// (`task-clock`: virtual machines often have no instruction counter). Of the container start
// path, `envhook shim create --bundle B ID` on the typical pod (what hooks/envhook-runtime runs
// on every create), and of `envhook version`, for the current build and for BENCH_BEFORE/dist,
// runs interleaved, medians; wall time beside it. Writes its table into bench/RESULTS.md
// ("Before and after").
//   BENCH_BEFORE=/path/to/copy node bench/before-after.mjs      (after npm run build)
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { benchEnv, median, loadavg } from './harness.mjs';
import { NODE, REPO, BEFORE } from './cli.mjs';
import { typicalPod, resetOwners, setBundleBase } from './fixtures.mjs';

if (!BEFORE) throw new Error('BENCH_BEFORE=DIR (a copy of dist/ from before the change, as DIR/dist) is required');
const RUNS = Math.max(10, Number(process.env.BENCH_RUNS) || 21);
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'envhook-instr-'));
const shm = fs.mkdtempSync('/dev/shm/envhook-instr-');
setBundleBase(shm);
try {
  const fx = typicalPod(path.join(work, 'typical'));
  const builds = {
    'SEA, after': [path.join(REPO, 'dist/envhook')],
    'SEA, before': [path.join(BEFORE, 'dist/envhook')],
    'bundle, after': [NODE, path.join(REPO, 'dist/envhook.cjs')],
    'bundle, before': [NODE, path.join(BEFORE, 'dist/envhook.cjs')],
  };
  const env = { ...benchEnv, ENVHOOK_KUBELET_ROOT: fx.pod.root };
  const cases = [];
  for (const [label, argv] of Object.entries(builds)) {
    cases.push({
      what: 'envhook shim create (typical pod)',
      label,
      argv: [...argv, 'shim', 'create', '--bundle', fx.bundle, 'id'],
      prepare: () => (fx.restore(), resetOwners(fx.pod)),
      check: true,
    });
    cases.push({ what: 'envhook version', label, argv: [...argv, 'version'] });
  }
  const probe = path.join(work, 'probe.txt');
  spawnSync('perf', ['stat', '-x,', '-o', probe, '-e', 'instructions:u', '--', 'true']);
  const counted = /^\d/m.test(fs.existsSync(probe) ? fs.readFileSync(probe, 'utf8') : '');
  const EVENT = counted ? 'instructions:u' : 'task-clock';
  const UNIT = counted ? 'M instructions' : 'ms CPU';
  const SCALE = counted ? 1e6 : 1;
  const count = (c) => {
    c.prepare?.();
    const out = path.join(work, 'perf.txt');
    const t0 = process.hrtime.bigint();
    const r = spawnSync('perf', ['stat', '-x,', '-o', out, '-e', EVENT, '--', ...c.argv], { env, encoding: 'utf8' });
    (c.wall ??= []).push(Number(process.hrtime.bigint() - t0) / 1e6);
    if (r.status !== 0) throw new Error(`${c.label}: ${c.argv.join(' ')} exited ${r.status}: ${r.stderr}`);
    if (c.check && !fs.readFileSync(path.join(fx.bundle, 'config.json'), 'utf8').includes('envhook.io/applied'))
      throw new Error(`${c.label}: config.json not rewritten`);
    return Number(
      fs
        .readFileSync(out, 'utf8')
        .split('\n')
        .find((l) => l.includes(EVENT))
        ?.split(',')[0],
    );
  };
  for (const c of cases) c.counts = [count(c)];
  const load = loadavg();
  for (let i = 0; i < RUNS; i++)
    for (let k = 0; k < cases.length; k++) cases[(i + k) % cases.length].counts.push(count(cases[(i + k) % cases.length]));
  const M = (c) => median(c.counts.slice(1)) / SCALE;
  const W = (c) => median(c.wall.slice(1));
  const rows = [];
  for (const what of [...new Set(cases.map((c) => c.what))]) {
    for (const kind of ['SEA', 'bundle']) {
      const after = cases.find((c) => c.what === what && c.label === `${kind}, after`);
      const before = cases.find((c) => c.what === what && c.label === `${kind}, before`);
      const d = M(after) - M(before);
      const w = W(after) - W(before);
      const pct = (x, base) => `${x >= 0 ? '+' : ''}${x.toFixed(1)} (${((x / base) * 100).toFixed(1)}%)`;
      rows.push(
        `| ${what} | ${kind} | ${M(before).toFixed(1)} | ${M(after).toFixed(1)} | ${pct(d, M(before))} | ${W(before).toFixed(1)} | ${W(after).toFixed(1)} | ${pct(w, W(before))} |`,
      );
    }
  }
  const size = (f) => (fs.statSync(f).size / 1024).toFixed(0);
  const section = `## Before and after (bench/before-after.mjs)

${new Date().toISOString().replace(/\.\d+Z$/, 'Z')}: ${counted ? 'user-space instructions' : 'CPU time (no instruction counter on this machine)'} (\`perf stat -e ${EVENT}\`), median of ${RUNS} interleaved runs,
before = ${process.env.BENCH_BEFORE_LABEL ?? BEFORE}, after = this tree; load ${load}. Bundle dist/envhook-main.cjs:
${size(path.join(BEFORE, 'dist/envhook-main.cjs'))} KiB before, ${size(path.join(REPO, 'dist/envhook-main.cjs'))} KiB after.

| command | build | before (${UNIT}) | after (${UNIT}) | Δ | before (ms wall) | after (ms wall) | Δ wall |
|---|---|---|---|---|---|---|---|
${rows.join('\n')}
`;
  const results = path.join(REPO, 'bench/RESULTS.md');
  const text = fs.existsSync(results) ? fs.readFileSync(results, 'utf8') : '';
  const start = text.indexOf('## Before and after');
  const kept = start >= 0 ? text.slice(0, start).trimEnd() : text.trimEnd();
  fs.writeFileSync(results, `${kept}\n\n${section}`);
  console.log(section);
} finally {
  fs.rmSync(work, { recursive: true, force: true });
  fs.rmSync(shm, { recursive: true, force: true });
}
