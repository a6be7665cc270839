// Experiments for row 8: the idle memory of `envhook nri`'s supervisor and worker
// under V8 flag sets given to the bundle's Node (both processes get them: the supervisor passes
// its execArgv to its worker), after registration with the test peer and after 2,000 typical
// CreateContainers. Run: node bench/nri-flags.mjs (after npm run build). Prints a table; writes
// nothing. BENCH_NRI_FLAG_SETS: sets separated by ';' (default below).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { benchEnv, loadavg } from './harness.mjs';
import { NODE, REPO } from './cli.mjs';
import { memOf, nriRequests } from './nri.mjs';
import { startFakeRuntime } from '../test/helpers/nri/runtime.ts';
import { encode, Msg } from '../src/nri/wire/descriptors.ts';

const SETS = (
  process.env.BENCH_NRI_FLAG_SETS ??
  ';--jitless;--max-semi-space-size=1;--jitless --max-semi-space-size=1;--lite-mode;--max-semi-space-size=1 --max-old-space-size=16'
).split(';');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function once(flags) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'envhook-bench-flags-'));
  const rt = await startFakeRuntime({ dir });
  const runDir = path.join(dir, 'run');
  const config = path.join(dir, 'config.json');
  fs.writeFileSync(config, JSON.stringify({ kubeletRoot: path.join(dir, 'kubelet'), runDir }));
  const p = spawn(NODE, [...flags, path.join(REPO, 'dist/envhook.cjs'), 'nri', '--socket', rt.socketPath], {
    env: { ...benchEnv, ENVHOOK_CONFIG: config },
    stdio: 'ignore',
  });
  try {
    const plugin = await rt.nextPlugin();
    let worker;
    while (!worker) {
      await sleep(50);
      try {
        worker = JSON.parse(fs.readFileSync(path.join(runDir, 'nri-status.json'), 'utf8')).workerPid;
      } catch {}
    }
    await sleep(3000);
    const idle = { sup: memOf(p.pid), w: memOf(worker) };
    const { env: _n, ...req } = nriRequests(path.join(dir, 'kubelet'))['typical annotated pod'];
    const payload = encode(Msg.CreateContainerRequest, req);
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < 2000; i++) await plugin.call('CreateContainer', payload, 5000);
    const ms = Number(process.hrtime.bigint() - t0) / 1e6 / 2000;
    await sleep(1000);
    return { idle, after: { sup: memOf(p.pid), w: memOf(worker) }, ms };
  } finally {
    p.kill('SIGTERM');
    await new Promise((r) => p.once('exit', r));
    await rt.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const f = (x) => x.toFixed(1);
console.log(`load ${loadavg()}`);
console.log(
  '| flags (both processes) | supervisor VmRSS / RssAnon idle | worker VmRSS / RssAnon idle | worker VmRSS / RssAnon after 2,000 | ms per request (mean) |',
);
console.log('|---|---|---|---|---|');
for (const set of SETS) {
  const flags = set.split(' ').filter(Boolean);
  const r = await once(flags);
  console.log(
    `| ${set || '(as shipped)'} | ${f(r.idle.sup.rss)} / ${f(r.idle.sup.anon)} | ${f(r.idle.w.rss)} / ${f(r.idle.w.anon)} | ${f(r.after.w.rss)} / ${f(r.after.w.anon)} | ${r.ms.toFixed(2)} |`,
  );
}
