// PostCreateContainer's cost (missed containers): on a runtime without NRI's sync
// block (containerd before 1.7.26, CRI-O) envhook also takes PostCreateContainer, a call the
// runtime waits for before CreateContainer returns to the kubelet. `envhook nri` (dist bundle)
// driven by the test peer playing containerd 1.7.24, round trips of StateChange(POST_CREATE)
// for row 8's two pods, one in flight, beside the floor process (bench/nri-floor.mjs: framing
// only) in the same run: (a) a container whose CreateContainer this worker answered (every
// container on a node while envhook runs: the id is looked up, nothing else), (b) an annotated
// one it did not answer but that has the applied mark (a previous worker's: the full check,
// nothing reported). Prints a table; writes nothing. Run: node bench/nri-post-create.mjs after
// npm run build (BENCH_NRI_POST_CREATE sets the calls per case, default 5,000).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { benchEnv, loadavg, percentileOfSorted as pct } from './harness.mjs';
import { NODE, REPO } from './cli.mjs';
import { nriRequests, startFloor } from './nri.mjs';
import { startFakeRuntime } from '../test/helpers/nri/runtime.ts';
import { encode, Msg } from '../src/nri/wire/descriptors.ts';
import { EVENT_POST_CREATE_CONTAINER } from '../src/nri/wire/nri-schema.ts';

const N = Number(process.env.BENCH_NRI_POST_CREATE) || 5000;
const ms = (x) => x.toFixed(3);

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'envhook-bench-postcreate-'));
const rt = await startFakeRuntime({ dir, runtime: { name: 'containerd', version: '1.7.24~ds1' } });
const procs = [];
try {
  const kubeletRoot = path.join(dir, 'kubelet');
  const config = path.join(dir, 'config.json');
  fs.writeFileSync(config, JSON.stringify({ kubeletRoot, runDir: path.join(dir, 'run'), logLevel: 'warn' }));
  const envhook = spawn(NODE, [path.join(REPO, 'dist/envhook.cjs'), 'nri', '--socket', rt.socketPath], {
    env: { ...benchEnv, NODE_EXTRA_CA_CERTS: '', ENVHOOK_CONFIG: config },
    stdio: 'ignore',
  });
  procs.push(envhook);
  const plugin = await rt.nextPlugin();
  if ((plugin.events & (1 << (EVENT_POST_CREATE_CONTAINER - 1))) === 0) throw new Error('envhook did not subscribe to PostCreateContainer');
  const { proc: floorProc, peer: floor } = await startFloor(rt);
  procs.push(floorProc);

  const rows = [];
  for (const [label, { env: _n, ...req }] of Object.entries(nriRequests(kubeletRoot))) {
    const { adjust } = await plugin.createContainer(req, 5000);
    const mark = Object.fromEntries(Object.entries(adjust?.annotations ?? {}).filter(([k]) => k.startsWith('envhook.io/applied')));
    const container = (id, annotations) => ({
      ...req.container,
      id,
      annotations: { ...req.container.annotations, ...annotations },
      state: 1,
    });
    const event = (c) => encode(Msg.StateChangeEvent, { event: EVENT_POST_CREATE_CONTAINER, pod: req.pod, container: c });
    const cases = [
      [
        'answered by this worker',
        async (i) => {
          await plugin.createContainer({ ...req, container: { ...req.container, id: `seen-${label}-${i}` } }, 5000);
          return event(container(`seen-${label}-${i}`, mark));
        },
      ],
      ...(Object.keys(mark).length
        ? [['not answered by it, marked (full check)', async (i) => event(container(`other-${label}-${i}`, mark))]]
        : []),
    ];
    for (const [what, make] of cases) {
      const times = { envhook: [], floor: [] };
      for (let i = 0; i < N + 200; i++) {
        const payload = await make(i);
        for (const [side, p] of [
          ['envhook', plugin],
          ['floor', floor],
        ]) {
          const t0 = process.hrtime.bigint();
          await p.call('StateChange', payload, 5000);
          if (i >= 200) times[side].push(Number(process.hrtime.bigint() - t0) / 1e6);
        }
      }
      for (const xs of Object.values(times)) xs.sort((a, b) => a - b);
      rows.push({ label, what, bytes: (await make(N + 999)).length, ...times });
    }
  }
  console.log(
    `PostCreateContainer round trips, envhook nri (dist bundle, Node ${process.version}) against the floor, ${N} calls a case, load ${loadavg()}\n`,
  );
  console.log('| pod | container | event bytes | envhook p50 ms | envhook p99 ms | floor p50 ms | floor p99 ms | own p50 ms |');
  console.log('|---|---|---|---|---|---|---|---|');
  for (const r of rows)
    console.log(
      `| ${r.label} | ${r.what} | ${r.bytes} | ${ms(pct(r.envhook, 50))} | ${ms(pct(r.envhook, 99))} | ${ms(pct(r.floor, 50))} | ${ms(pct(r.floor, 99))} | ${ms(pct(r.envhook, 50) - pct(r.floor, 50))} |`,
    );
} finally {
  for (const p of procs) p.kill('SIGTERM');
  await rt.close();
  fs.rmSync(dir, { recursive: true, force: true });
}
