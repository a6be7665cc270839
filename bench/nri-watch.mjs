// Row 9: the owner watcher inside `envhook nri` (the watcher's figures for the NRI daemon). The
// daemon (the bundle, dist/envhook.cjs) is driven by the test peer that plays the runtime
// (test/helpers/nri/runtime.ts), whose Synchronize gives it one running pod with
// `envhook.io/volumeOwners` on a three-file secret volume (tmpfs, as secret volumes are). Then:
//   a) CreateContainer of another pod (the typical annotated pod of row 8), one in flight, in
//      blocks with that volume rewritten at 100/s by a child process playing the kubelet
//      (bench/watch-writer.ts: the atomic-writer double) and blocks without, alternating
//      (off on on off off on): p50/p99 of each;
//   b) the daemon's memory over 10,000 rewrites at 100/s (checkpoints every 2,500), then over
//      20,000 more as fast as the writer goes (a stress the kubelet never makes): VmRSS, RssAnon,
//      and V8's heap in use after the last full GC (from the daemon's --trace-gc lines), which is
//      what would show a leak (RSS also follows the heap V8 keeps committed).
// Every rewrite must end owned (checked after each part), or the bench stops: it would not be
// timing the watcher. Alone: `node bench/nri-watch.mjs` after `npm run build` (replaces only its
// section of bench/RESULTS.md); in `npm run bench` as row 9 (BENCH_ONLY=9).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { benchEnv, loadavg, percentileOfSorted } from './harness.mjs';
import { NODE, REPO } from './cli.mjs';
import { nriRequests, writeResultsSection } from './nri.mjs';
import { startFakeRuntime } from '../test/helpers/nri/runtime.ts';
import { encode, Msg } from '../src/nri/wire/descriptors.ts';
import { atomicVolumeDir, makePod } from '../scripts/kubelet-pod.ts';

const HEADING = '## NRI plugin with the owner watcher (row 9)';
const UID = 1000;
const BLOCK_REWRITES = Number(process.env.BENCH_NRI_WATCH_BLOCK) || 500; // 5 s at 100/s
const RSS_REWRITES = Number(process.env.BENCH_NRI_WATCH_REWRITES) || 10_000;
const STRESS_BATCHES = 2;
const FULL_GC = /Mark-Compact [\d.]+ \([\d.]+\) -> ([\d.]+) \(([\d.]+)\) MB/;
const FILES = ['ssh_host_ed25519_key', 'ssh_host_ed25519_key.pub', 'tls/server.key'];

const status = (pid, field) => Number(fs.readFileSync(`/proc/${pid}/status`, 'utf8').match(new RegExp(`${field}:\\s+(\\d+)`))[1]) / 1024;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** The kubelet's side: `count` rewrites, one every `intervalMs`; resolves with the writer's report. */
function writer(vol, count, intervalMs) {
  const child = spawn(NODE, [path.join(REPO, 'bench/watch-writer.ts'), vol, String(count), String(intervalMs), String(UID), 'churn'], {
    env: benchEnv,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  return new Promise((resolve, reject) =>
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`bench nri-watch: writer exited ${code}`)))),
  );
}

/** Waits until every file `..data` points at carries the owner; throws if it never does. */
async function ownedNow(vol, what) {
  const end = Date.now() + 5000;
  while (!FILES.every((f) => fs.lstatSync(path.join(vol, '..data', f)).uid === UID)) {
    if (Date.now() > end) throw new Error(`bench nri-watch: ${what}: the rewritten volume is not owned: the watcher is not working`);
    await sleep(10);
  }
}

export async function nriWatchRow() {
  const dir = fs.mkdtempSync('/dev/shm/envhook-bench-nri-watch-');
  const kubeletRoot = path.join(dir, 'kubelet');
  const uid = '5c0ffee0-0000-4000-8000-00000000c4c4';
  const payload = Object.fromEntries(FILES.map((f) => [f, { data: 'x\n', mode: 0o400 }]));
  const vol = atomicVolumeDir(makePod(kubeletRoot, { atomic: [{ plugin: 'secret', name: 'keys', payload }] }, uid), 'secret', 'keys');
  const churnPod = {
    id: 'churn-sandbox',
    name: 'churn',
    namespace: 'default',
    uid,
    annotations: { 'envhook.io/volumeOwners': JSON.stringify([{ volume: 'keys', defaultUser: UID }]) },
  };
  const rt = await startFakeRuntime({
    dir,
    synchronize: () => [
      { pods: [churnPod], containers: [{ id: 'churn-ctr', podSandboxId: churnPod.id, name: 'app', state: 3 }], more: false },
    ],
  });
  let envhook;
  try {
    const config = path.join(dir, 'config.json');
    fs.writeFileSync(config, JSON.stringify({ kubeletRoot, runDir: path.join(dir, 'run') }));
    const flags = ['--trace-gc', ...(process.env.BENCH_NRI_NODE_FLAGS?.split(' ').filter(Boolean) ?? [])];
    envhook = spawn(NODE, [...flags, path.join(REPO, 'dist/envhook.cjs'), 'nri', '--socket', rt.socketPath], {
      env: { ...benchEnv, ENVHOOK_CONFIG: config },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    // --trace-gc lines on the daemon's stdout (it prints nothing else there): the last full GC's
    // heap. Only the supervisor's reach this pipe: its worker's stdout goes nowhere (src/nri/supervisor/spawn.ts).
    let fullGc;
    let gcText = '';
    envhook.stdout.on('data', (d) => {
      const lines = (gcText + d).split('\n');
      gcText = lines.pop();
      for (const l of lines) {
        const m = FULL_GC.exec(l);
        if (m) fullGc = { used: Number(m[1]), total: Number(m[2]) };
      }
    });
    const died = new Promise((_, reject) =>
      envhook.once('exit', (code) => reject(new Error(`envhook nri exited (${code}) before registering`))),
    );
    const plugin = await Promise.race([rt.nextPlugin(), died]);
    died.catch(() => {});
    await ownedNow(vol, 'after Synchronize');

    const { env: wantEnv, ...req } = nriRequests(kubeletRoot)['typical annotated pod'];
    const adjusted = (await plugin.createContainer(req, 5000)).adjust?.env?.length ?? 0;
    if (adjusted !== wantEnv) throw new Error(`bench nri-watch: the adjustment sets ${adjusted} variables, not ${wantEnv}`);
    const payload = encode(Msg.CreateContainerRequest, req);
    const call = async (into) => {
      const t0 = process.hrtime.bigint();
      await plugin.call('CreateContainer', payload, 5000);
      into.push(Number(process.hrtime.bigint() - t0) / 1e6);
    };
    for (let i = 0; i < 500; i++) await call([]); // warm-up

    const load = loadavg();
    const times = { off: [], on: [] };
    let rewrites = 0;
    let churnSeconds = 0;
    let blockMs = 0;
    for (const churn of [false, true, true, false, false, true]) {
      const into = churn ? times.on : times.off;
      if (churn) {
        const t0 = Date.now();
        let done = false;
        const w = writer(vol, BLOCK_REWRITES, 10).then((r) => ((done = true), r));
        await sleep(200); // the writer's Node is up and rewriting
        while (!done) await call(into);
        rewrites += (await w).count;
        churnSeconds += (Date.now() - t0 - 200) / 1000;
        blockMs = Date.now() - t0;
        await ownedNow(vol, 'after a churn block');
      } else {
        const end = Date.now() + (blockMs || BLOCK_REWRITES * 11);
        while (Date.now() < end) await call(into);
      }
    }
    for (const xs of Object.values(times)) xs.sort((a, b) => a - b);

    // Memory: checkpoints every quarter of RSS_REWRITES at 100/s, then STRESS_BATCHES at full speed.
    // The worker, not the supervisor started above: it holds the connection and the watches.
    const pid = JSON.parse(fs.readFileSync(path.join(dir, 'run', 'nri-status.json'), 'utf8')).workerPid;
    const sample = (rewrites, rate) => ({
      rewrites,
      rate,
      rss: status(pid, 'VmRSS'),
      anon: status(pid, 'RssAnon'),
      heap: pid === envhook.pid ? fullGc : undefined,
    });
    const memory = [sample(0, '')];
    let count = 0;
    let maxRss = memory[0].rss;
    const sampler = setInterval(() => (maxRss = Math.max(maxRss, status(pid, 'VmRSS'))), 250);
    for (const [batches, size, interval] of [
      [4, RSS_REWRITES / 4, 10],
      [STRESS_BATCHES, RSS_REWRITES, 0],
    ]) {
      for (let b = 0; b < batches; b++) {
        const t0 = Date.now();
        count += (await writer(vol, size, interval)).count;
        const rate = `${(size / ((Date.now() - t0) / 1000)).toFixed(0)}/s`;
        await ownedNow(vol, `after ${count} rewrites`);
        await sleep(1000);
        memory.push(sample(count, rate));
      }
    }
    clearInterval(sampler);
    return {
      load,
      end: loadavg(),
      off: { n: times.off.length, p50: percentileOfSorted(times.off, 50), p99: percentileOfSorted(times.off, 99) },
      on: { n: times.on.length, p50: percentileOfSorted(times.on, 50), p99: percentileOfSorted(times.on, 99) },
      rate: rewrites / churnSeconds,
      rewrites,
      memory,
      maxRss,
    };
  } finally {
    envhook?.kill('SIGTERM');
    await rt.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const f3 = (x) => x.toFixed(3);
const f1 = (x) => x.toFixed(1);

export function nriWatchSection(r) {
  return `${HEADING}

\`envhook nri\` (\`dist/envhook.cjs\`, Node ${process.version}) driven by the test peer, its
Synchronize giving one running pod whose three-file secret volume (tmpfs) has
\`envhook.io/volumeOwners\`; a child process rewrites that volume with the kubelet's atomic-writer
operations (bench/watch-writer.ts). (a) CreateContainer of another pod (row 8's typical
annotated pod), one in flight, round trip in ms as the peer sees it, in blocks with that churn
(${r.rewrites} rewrites at ${r.rate.toFixed(0)}/s measured) and without, alternating off on on off off on.
(b) The memory of the daemon's worker (the process that holds the connection and the watches;
\`envhook nri\` is a supervisor and one worker) 1 s after each batch of rewrites: ${RSS_REWRITES} at ~100/s, then ${STRESS_BATCHES * RSS_REWRITES} as fast as
the writer goes (a stress: the kubelet rewrites a volume when its source changes). VmRSS includes
~40 MiB of Node's own binary; RssAnon is the worker's own. "heap after full GC" (V8's heap in use
and committed after its last mark-compact, from \`--trace-gc\`) would be the figure a leak moves,
but the worker's stdout goes nowhere (the supervisor starts it so), so its trace is not seen here.
Every rewrite ended owned by UID ${UID} (checked after each
block). Load average ${r.load} at the start, ${r.end} at the end (2 CPUs, shared).

| CreateContainer | requests | p50 ms | p99 ms |
|---|---|---|---|
| no churn | ${r.off.n} | ${f3(r.off.p50)} | ${f3(r.off.p99)} |
| another pod's volume rewritten at ~100/s | ${r.on.n} | ${f3(r.on.p50)} | ${f3(r.on.p99)} |
| Δ | | ${r.on.p50 - r.off.p50 >= 0 ? '+' : ''}${f3(r.on.p50 - r.off.p50)} | ${r.on.p99 - r.off.p99 >= 0 ? '+' : ''}${f3(r.on.p99 - r.off.p99)} |

| rewrites | rate | VmRSS MiB | RssAnon MiB | heap after full GC, used (committed) MiB |
|---|---|---|---|---|
${r.memory.map((x) => `| ${x.rewrites} | ${x.rate} | ${f1(x.rss)} | ${f1(x.anon)} | ${x.heap ? `${f1(x.heap.used)} (${f1(x.heap.total)})` : 'no full GC yet'} |`).join('\n')}

Maximum VmRSS (sampled every 250 ms): ${f1(r.maxRss)} MiB.
`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  if (os.userInfo().uid !== 0) throw new Error('bench nri-watch: run as root (the watcher chowns)');
  const section = nriWatchSection(await nriWatchRow());
  writeResultsSection(HEADING, section);
  console.log(section);
}
