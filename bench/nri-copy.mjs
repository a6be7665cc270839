// Row 12: owned copies under NRI (docs/ownership.md), on one private containerd 2.1.9 with NRI on,
// driven over CRI as the kubelet drives it, envhook at its default settings (no --fifo-priority).
// Sides, one plugin at a time in alternating blocks: "after" (this build, dist/envhook.cjs: the
// container reads envhook's owned copy), "before" (BENCH_BEFORE=DIR, an earlier build
// DIR/dist/envhook.cjs that chowns the kubelet's files in place; without it the side is left out
// and the section says so) and "none" (no plugin).
//   a) Freshness: a pod whose 3-file secret volume (0400, tmpfs like the kubelet's) has
//      `envhook.io/volumeOwners` defaultUser 1000, one container (UID 1000) mounting it; the
//      bench rewrites the volume with the kubelet's atomic-writer operations and times from the
//      kubelet's `..data` rename to the moment the container's own view (/proc/<pid>/root/…)
//      shows every file's new content owned by 1000, polled every 0.25 ms (a futex sleep, so the
//      probe does not take a CPU from the plugin); p50/p99 quiet and with both CPUs busy (one
//      spinning shell per CPU, scripts/cpu-burners.ts). "none" times the new content alone (its
//      files stay root's): the probe's own floor. Each rewrite waits for the view, then 30-80 ms.
//   b) The cost of a CreateContainer (and Create+Start) of a pod with owners: the 3-file secret,
//      and a 100-file projected volume; the kubelet's files reset to root before each create (so
//      "before" chowns every file each time), the worker's CPU per create from /proc/<pid>/stat.
// Every side's view is checked once per block (owned by 1000 with a plugin, root's without).
// Alone: `node bench/nri-copy.mjs` as root after `npm run build`; replaces only its section of
// bench/RESULTS.md. BENCH_COPY_REWRITES (default 200 a side and load) and BENCH_RUNS.
// BENCH_COPY_AFTER_ARGS: flags for the "after" side's `envhook nri` (an experiment, e.g.
// `--fifo-priority 10`): the table is printed, RESULTS.md left alone.
import fs from 'node:fs';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { RUNS, benchEnv, loadavg, median, percentileOfSorted } from './harness.mjs';
import { NODE, REPO } from './cli.mjs';
import { removeContainer } from './cri.mjs';
import { replaceMarkedSection } from './sections.mjs';
import { missingForCri, prepareCriContainerd } from '../test/helpers/cri/containerd.ts';
import { runPod } from '../test/helpers/cri/pod.ts';
import { atomicVolumeDir, atomicWrite } from '../scripts/kubelet-pod.ts';
import { startBurners } from '../scripts/cpu-burners.ts';
import { LATENCY_BUCKETS } from '../src/watch/latency.ts';

const START = '<!-- row 12: owned copies -->';
const END = '<!-- end of row 12 -->';
const UID = 1000;
const REWRITES = Number(process.env.BENCH_COPY_REWRITES) || 200;
const BEFORE = process.env.BENCH_BEFORE ? path.join(process.env.BENCH_BEFORE, 'dist/envhook.cjs') : undefined;
if (BEFORE && !fs.existsSync(BEFORE)) throw new Error(`row 12: BENCH_BEFORE: ${BEFORE} not found`);
const BLOCKS = (BEFORE ? ['after', 'before', 'none', 'none', 'before', 'after'] : ['after', 'none', 'none', 'after']).map((side, i) => ({
  side,
  busyFirst: i % 2 === 1,
}));
const SECRET = ['ssh_host_ed25519_key', 'ssh_host_ed25519_key.pub', 'tls/server.key'];
const secret = (i) => Object.fromEntries(SECRET.map((f) => [f, { data: `${f} ${i}\n`, mode: 0o400 }]));
const projected = () => Object.fromEntries(Array.from({ length: 100 }, (_, k) => [`cert-${String(k).padStart(3, '0')}.pem`, 'x\n']));
const owners = (volume) => ({ 'envhook.io/volumeOwners': JSON.stringify([{ volume, defaultUser: UID }]) });
const nap = (
  (cell) => (ms) =>
    Atomics.wait(cell, 0, 0, ms)
)(new Int32Array(new SharedArrayBuffer(4)));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const until = async (check, what, ms = 60_000) => {
  for (const end = Date.now() + ms; !check(); await sleep(20)) if (Date.now() > end) throw new Error(`row 12: timed out: ${what}`);
};
const cpuTicks = (pid) => {
  const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return Number(f[11]) + Number(f[12]); // utime + stime, in clock ticks (100 a second)
};

/** Starts a side's plugin (nothing for "none"); resolves once containerd has it and its worker is up. */
async function pluginOn(c, kubeletRoot, side) {
  if (side === 'none') return { stop: async () => {}, workerPid: () => undefined, status: () => undefined };
  const bundle = side === 'after' ? path.join(REPO, 'dist/envhook.cjs') : BEFORE;
  const runDir = path.join(c.dir, `run-${side}`);
  const config = path.join(c.dir, `envhook-${side}.json`);
  fs.writeFileSync(config, JSON.stringify({ runDir }) + '\n');
  const from = fs.readFileSync(c.paths.log, 'utf8').length;
  const extra = side === 'after' ? (process.env.BENCH_COPY_AFTER_ARGS?.split(' ').filter(Boolean) ?? []) : [];
  const proc = spawn(NODE, [bundle, 'nri', '--socket', c.paths.nriSocket, '--kubelet-root', kubeletRoot, ...extra], {
    env: { ...benchEnv, NODE_EXTRA_CA_CERTS: '', ENVHOOK_CONFIG: config },
    stdio: 'ignore',
  });
  const status = () => JSON.parse(fs.readFileSync(path.join(runDir, 'nri-status.json'), 'utf8'));
  await until(
    () => /plugin \\"50-envhook\\" connected and synchronized/.test(fs.readFileSync(c.paths.log, 'utf8').slice(from)),
    `${side} connected`,
  );
  await until(() => fs.existsSync(path.join(runDir, 'nri-status.json')) && status().workerPid > 0, `${side}: worker in the status file`);
  return {
    workerPid: () => status().workerPid,
    status,
    stop: async () => {
      proc.kill('SIGTERM');
      await new Promise((r) => (proc.exitCode === null ? proc.once('exit', r) : r()));
    },
  };
}

/** The container's view of the secret shows rewrite `i` (and, with a plugin, every file owned by 1000). */
function viewShows(pid, i, owned) {
  try {
    return SECRET.every((f) => {
      const p = `/proc/${pid}/root/keys/${f}`;
      return fs.readFileSync(p, 'utf8') === `${f} ${i}\n` && (!owned || fs.statSync(p).uid === UID);
    });
  } catch {
    return false; // between the swap's steps
  }
}

/**
 * The same delay by the kernel's own clock, free of the probe's scheduling: the change time of
 * what made the view owned (the copy's `..data` rename, or the last chown of the kubelet's files
 * in place) less that of the kubelet's `..data` rename; 0 when owned before it. tmpfs stamps
 * these with the kernel's tick (4 ms here), so this is the figure for the tail, not the median.
 */
function kernelDelay(vol, pid) {
  const swap = fs.lstatSync(path.join(vol, '..data')).ctimeMs;
  const view = `/proc/${pid}/root/keys`;
  const copy = fs.readlinkSync(`${view}/..data`) !== fs.readlinkSync(path.join(vol, '..data'));
  const owned = copy ? fs.lstatSync(`${view}/..data`).ctimeMs : Math.max(...SECRET.map((f) => fs.statSync(`${view}/${f}`).ctimeMs));
  return Math.max(0, owned - swap);
}

/** Rewrites the secret `count` times from rewrite `n`; returns the swap → view delays in ms (Infinity: not within 2 s). */
function churn(vol, pid, n, count, owned, kernel) {
  const out = [];
  for (let i = n; i < n + count; i++) {
    let t0 = 0;
    atomicWrite(vol, secret(i), { afterRename: () => (t0 = performance.now()) });
    let ms = performance.now() - t0;
    while (!viewShows(pid, i, owned) && ms < 2000) {
      nap(0.25);
      ms = performance.now() - t0;
    }
    out.push(viewShows(pid, i, owned) ? ms : Infinity);
    if (owned && Number.isFinite(out.at(-1))) kernel.push(kernelDelay(vol, pid));
    nap(30 + Math.random() * 50);
  }
  return out;
}

/**
 * What the worker says of a phase's rewrites (status before and after): its CPU ms per rewrite,
 * and its own delay (the kubelet's `..data` ctime to its copy's swap) as cumulative bucket counts.
 */
function workerSide(plugin) {
  const pid = plugin.workerPid();
  if (!pid) return () => undefined;
  const at = () => ({ ticks: cpuTicks(pid), l: plugin.status().owners?.copyLatency ?? { buckets: [], count: 0 } });
  const t0 = at();
  return (rewrites) => {
    const t1 = at();
    const buckets = t1.l.buckets.map((b, i) => b - (t0.l.buckets[i] ?? 0));
    return { n: rewrites, copies: t1.l.count - t0.l.count, cpuMs: ((t1.ticks - t0.ticks) * 10) / rewrites, buckets };
  };
}

/** One block's freshness: a running UID-1000 container, quiet and busy halves. */
async function freshnessBlock(c, kubeletRoot, plugin, block, n, into) {
  const pod = await runPod(c, kubeletRoot, {
    name: `copy-fresh-${n}`,
    handler: '',
    annotations: owners('keys'),
    secrets: { keys: secret(n) },
  });
  const id = await pod.run({ name: 'app', command: ['sleep', '3600'], volumeMounts: { keys: '/keys' }, user: UID });
  const pid = await pod.pid(id);
  const owned = block.side !== 'none';
  const uid0 = fs.statSync(`/proc/${pid}/root/keys/${SECRET[0]}`).uid;
  if (uid0 !== (owned ? UID : 0)) throw new Error(`row 12: ${block.side}: the container sees its secret owned by ${uid0}`);
  const vol = atomicVolumeDir(pod.pod, 'secret', 'keys');
  const half = Math.ceil(REWRITES / 2);
  for (const busy of block.busyFirst ? [true, false] : [false, true]) {
    const stop = busy ? startBurners() : () => {};
    await sleep(200);
    const load = busy ? 'busy' : 'quiet';
    try {
      const worker = workerSide(plugin);
      into[load].push(...churn(vol, pid, (n += half), half, owned, (into.kernel ??= { quiet: [], busy: [] })[load]));
      await sleep(100); // the status file follows the worker's heartbeat
      const w = worker(half);
      if (w) (into.worker ??= { quiet: [], busy: [] })[load].push(w);
    } finally {
      stop();
    }
    await sleep(200);
  }
  await pod.remove();
  return n;
}

/** One block's creates of one case; `times` gets create and create+start ms, the worker's CPU ticks per create. */
async function createBlock(c, kubeletRoot, plugin, k, name, into) {
  const pod = await runPod(c, kubeletRoot, { name, handler: '', annotations: owners(k.volume), ...k.pod });
  const dir = atomicVolumeDir(pod.pod, k.plugin, k.volume);
  const reset = () => {
    const data = path.join(dir, fs.readlinkSync(path.join(dir, '..data')));
    for (const f of fs.readdirSync(data, { recursive: true })) fs.lchownSync(path.join(data, f), 0, 0);
  };
  const per = Math.ceil(RUNS / 2) + 1; // the first create of each block is a warm-up
  const pid = plugin.workerPid();
  let ticks = 0;
  for (let i = 0; i < per; i++) {
    reset();
    const cpu0 = pid && cpuTicks(pid);
    const t0 = performance.now();
    const id = await pod.create({ name: 'app', command: ['sleep', '3600'], volumeMounts: { [k.volume]: '/v' }, user: UID });
    const t1 = performance.now();
    await pod.start(id);
    const t2 = performance.now();
    if (i > 0) {
      into.create.push(t1 - t0);
      into.start.push(t2 - t0);
      if (pid) ticks += cpuTicks(pid) - cpu0;
    }
    await removeContainer(c.cri, id);
  }
  into.cpuMs.push((ticks * 10) / (per - 1));
  await pod.remove();
}

const CASES = [
  { name: 'secret, 3 files', volume: 'keys', plugin: 'secret', pod: { secrets: { keys: secret(0) } } },
  { name: 'projected, 100 files', volume: 'certs', plugin: 'projected', pod: { projected: { certs: projected() } } },
];

async function run() {
  const c = prepareCriContainerd({ version: '2.1', nri: true, tmpBase: process.env.BENCH_BUNDLE_DIR ?? '/dev/shm' });
  await c.start();
  const kubeletRoot = path.join(c.dir, 'kubelet');
  const fresh = {};
  const creates = {};
  let n = 0;
  try {
    for (const block of BLOCKS) {
      const plugin = await pluginOn(c, kubeletRoot, block.side);
      try {
        fresh[block.side] ??= { quiet: [], busy: [] };
        n = await freshnessBlock(c, kubeletRoot, plugin, block, n + 1000, fresh[block.side]);
        for (const k of CASES) {
          const into = ((creates[k.name] ??= {})[block.side] ??= { create: [], start: [], cpuMs: [] });
          await createBlock(c, kubeletRoot, plugin, k, `copy-create-${n++}`, into);
        }
      } finally {
        await plugin.stop();
      }
    }
  } finally {
    const left = await c.stop();
    if (left.processes.length || left.mounts.length) console.error(`row 12: containerd left ${JSON.stringify(left)}`);
  }
  return { fresh, creates, label: c.label };
}

const f1 = (x) => (x === undefined ? '–' : Number.isFinite(x) ? x.toFixed(1) : '> 2000');
const ratio = (a, b) => (a === undefined || b === undefined ? '–' : `${(a / b).toFixed(2)}×`);
const pct = (xs, p) =>
  percentileOfSorted(
    [...xs].sort((a, b) => a - b),
    p,
  );
const SIDE = {
  after: 'after: owned copy (this build)',
  before: 'before: chown in place (BENCH_BEFORE)',
  none: "none: no plugin (the probe's floor: content only)",
};

function freshnessTable(r) {
  const rows = [];
  for (const load of ['quiet', 'busy']) {
    const before = r.fresh.before?.[load];
    for (const side of ['after', 'before', 'none']) {
      const xs = r.fresh[side]?.[load];
      if (!xs) continue;
      const late = xs.filter((x) => !Number.isFinite(x)).length;
      const vs = side === 'after' && before ? ` | ${ratio(pct(xs, 50), pct(before, 50))} / ${ratio(pct(xs, 99), pct(before, 99))}` : ' | ';
      const k = r.fresh[side]?.kernel?.[load];
      const kernel = k?.length ? `${f1(pct(k, 50))} / ${f1(pct(k, 99))}` : '–';
      rows.push(
        `| ${load === 'busy' ? 'both CPUs busy' : 'quiet'} | ${SIDE[side]} | ${xs.length} | ${f1(pct(xs, 50))} | ${f1(pct(xs, 99))} | ${f1(Math.max(...xs))} | ${kernel} | ${late}${vs} |`,
      );
    }
  }
  return rows.join('\n');
}

/** The upper bound (ms) of the bucket holding the p-th percentile of summed cumulative bucket counts. */
function bucketPct(buckets, n, p) {
  const i = buckets.findIndex((c) => c >= (p / 100) * n);
  return i < 0 ? '> 5000' : `≤ ${LATENCY_BUCKETS[i] * 1000}`;
}

function workerTable(r) {
  const rows = [];
  for (const side of ['after', 'before']) {
    for (const load of ['quiet', 'busy']) {
      const ws = r.fresh[side]?.worker?.[load];
      if (!ws?.length) continue;
      const n = ws.reduce((a, w) => a + w.n, 0);
      const cpu = ws.reduce((a, w) => a + w.cpuMs * w.n, 0) / Math.max(1, n);
      const buckets = LATENCY_BUCKETS.map((_, i) => ws.reduce((a, w) => a + (w.buckets[i] ?? 0), 0));
      const copies = ws.reduce((a, w) => a + w.copies, 0);
      const own = side === 'after' ? [bucketPct(buckets, copies, 50), bucketPct(buckets, copies, 99)] : ['–', '–'];
      rows.push(`| ${load === 'busy' ? 'both CPUs busy' : 'quiet'} | ${side} | ${n} | ${cpu.toFixed(2)} | ${own[0]} | ${own[1]} |`);
    }
  }
  return rows.join('\n');
}

function createTable(r, what) {
  return Object.entries(r.creates)
    .map(([name, s]) => {
      const m = (side) => (s[side] ? median(s[side][what]) : undefined);
      return `| ${name} | ${s.after[what].length} | ${f1(m('none'))} | ${f1(m('before'))} | ${f1(m('after'))} | ${ratio(m('after'), m('before'))} | ${ratio(m('after'), m('none'))} |`;
    })
    .join('\n');
}

function section(r, load0) {
  const cpu = Object.entries(r.creates)
    .map(([name, s]) => `${name}: before ${f1(median(s.before?.cpuMs ?? [NaN]))}, after ${f1(median(s.after.cpuMs))}`)
    .join('; ');
  return `${START}
## Owned copies under NRI (row 12): freshness and the cost of a CreateContainer with owners

Measured by \`${BEFORE ? `BENCH_BEFORE=${process.env.BENCH_BEFORE} ` : ''}node bench/nri-copy.mjs\` on ${new Date().toISOString().replace(/\.\d+Z$/, 'Z')} (load average ${load0} at start, ${loadavg()} at end;
2 CPUs shared with other sessions) on one private ${r.label} with CRI and NRI on; \`envhook nri\` at its
default settings (no \`--fifo-priority\`), one plugin at a time in alternating blocks
(${BLOCKS.map((b) => b.side).join(' ')}). Method: bench/README.md, row 12.${BEFORE ? '' : ' No BENCH_BEFORE: the chown in place is not measured.'}

Freshness: the kubelet's \`..data\` rename of a 3-file secret (0400, owners 1000) to the container's
own view showing every file's new content owned by 1000, in ms (probe every 0.25 ms; a probe that sleeps
also waits for a CPU to wake, so its tail includes its own scheduling); the same by the kernel's change
times (the copy's \`..data\` rename, or the last chown in place, less the kubelet's \`..data\` rename; 4 ms ticks
on tmpfs): free of the probe's scheduling; ratio: after ÷ before (probe).
Aim: p99 ≤ 50 ms with both CPUs busy.

| load | side | rewrites | p50 ms | p99 ms | max ms | by the kernel's change times p50 / p99 ms | not in view within 2 s | after ÷ before p50 / p99 |
|---|---|---|---|---|---|---|---|---|
${freshnessTable(r)}

What the worker (the process that copies) says of the same rewrites, from its status file before and
after each phase: its CPU time per rewrite, and its own delay from the kubelet's \`..data\` change time to
its copy's swap (\`envhook_owner_copy_update_latency_seconds\`: the bucket holding the 50th and 99th percentile):

| load | side | rewrites | worker CPU ms per rewrite | own delay p50 | own delay p99 |
|---|---|---|---|---|---|
${workerTable(r)}

CreateContainer of a pod with \`envhook.io/volumeOwners\` (defaultUser 1000) on the volume its container mounts, the kubelet's files reset to root before each; median ms:

| volume | creates a side | none | before (chown) | after (copy) | after ÷ before | after ÷ none |
|---|---|---|---|---|---|---|
${createTable(r, 'create')}

CreateContainer + StartContainer, same runs:

| volume | creates a side | none | before (chown) | after (copy) | after ÷ before | after ÷ none |
|---|---|---|---|---|---|---|
${createTable(r, 'start')}

The worker's CPU per CreateContainer (ms, /proc/<pid>/stat, median of the blocks): ${cpu}.
${END}`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const skip = missingForCri('2.1') ?? (fs.existsSync(path.join(REPO, 'dist/envhook.cjs')) ? undefined : 'dist/envhook.cjs not built');
  if (skip) {
    console.error(`row 12: skipped, ${skip}`);
    process.exit(0);
  }
  const load0 = loadavg();
  const text = section(await run(), load0);
  console.log(text);
  if (!process.env.BENCH_COPY_AFTER_ARGS) replaceMarkedSection(START, END, text);
}
