// Row 8: `envhook nri` (the bundle, and the single executable as installed) driven by the test
// peer that plays the runtime's side (test/helpers/nri/runtime.ts): CreateContainer requests at
// full speed, one in flight, each sent in turn to envhook, to the floor process
// (bench/nri-floor.mjs) and to the Go plugin on NRI's stub (bench/go-plugin), so the machine's
// load hits all alike. Reports round-trip p50/p99 of each, the plugin's own time (p50 minus the
// floor's), and the memory of envhook's worker and supervisor (and the Go plugin's) at idle and
// every 1,000 requests, beside Node's own idle floor. The handler is the pipeline's
// (src/nri/worker/handler.ts), reading the typical pod's files from a kubelet root of the bench's own.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { benchEnv, loadavg, percentileOfSorted } from './harness.mjs';
import { NODE, REPO } from './cli.mjs';
import { envFileText, makePod } from './fixtures.mjs';
import { goPlugin } from './go-plugin.mjs';
import { DAEMON_NODE_OPTION } from '../src/nri/process.ts';
import { makeAtomicVolume } from '../scripts/kubelet-pod.ts';
import { startFakeRuntime } from '../test/helpers/nri/runtime.ts';
import { encode, Msg } from '../src/nri/wire/descriptors.ts';
import { atomicWrite } from '../src/fs/atomic-write.ts';
import { encodeMux, encodeTtrpc, MessageType, RUNTIME_CONN } from '../src/nri/wire/frames.ts';
import { RUNTIME_SERVICE } from '../src/nri/wire/nri-schema.ts';

export const NRI_REQUESTS = Number(process.env.BENCH_NRI_REQUESTS) || 100_000;

/**
 * A typical annotated pod's CreateContainer (as containerd sends it), and an unannotated one.
 * The annotated pod is the benchmarks' typical pod (bench/fixtures.mjs: 10 fileKeyRefs, a
 * `$(VAR)` value, 2 envFrom files of 50, 100 projected files chowned) under a kubelet root of
 * the bench's own, without its service-link switch: NRI on containerd 2.1 drops env removals,
 * so envhook refuses them there (docs/nri.md) and the request would time the error path.
 */
export function nriRequests(kubeletRoot) {
  const pod = makePod(kubeletRoot, {
    envFiles: {
      'keys.env': envFileText({ count: 10, prefix: 'KEY_' }),
      'a.env': envFileText({ count: 50 }),
      'b.env': envFileText({ count: 50 }),
    },
    projectedFiles: 100,
  });
  const env = Array.from({ length: 10 }, (_, i) => ({
    name: `FROM_FILE_${i}`,
    valueFrom: { fileKeyRef: { volumeName: 'config', path: 'keys.env', key: `KEY_${String(i).padStart(5, '0')}` } },
  }));
  env.push({ name: 'GREETING', value: 'hello $(FROM_FILE_0) $$HOME' });
  const envFrom = [
    { prefix: 'A_', fileRef: { volumeName: 'config', path: 'a.env' } },
    { prefix: 'B_', fileRef: { volumeName: 'config', path: 'b.env' } },
  ];
  const owners = [{ volume: 'certs', defaultUser: 1000, items: [{ path: 'file-00000.pem', user: 0 }] }];
  const k8s = {
    'io.kubernetes.cri.sandbox-uid': pod.uid,
    'io.kubernetes.cri.sandbox-name': 'web-7d9c',
    'io.kubernetes.cri.sandbox-namespace': 'default',
    'kubernetes.io/config.seen': '2026-11-23T10:00:00Z',
    'kubernetes.io/config.source': 'api',
  };
  const container = (annotations) => ({
    id: 'c'.repeat(64),
    podSandboxId: 's'.repeat(64),
    name: 'app',
    annotations,
    env: [
      ...Array.from({ length: 50 }, (_, i) => `SVC${i}_SERVICE_HOST=10.0.${i}.1`),
      'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
      'HOSTNAME=web-7d9c',
    ],
    // The typical pod's container mounts its owned volume (as row 1's): read through envhook's copy.
    mounts: [...pod.mounts('app'), { destination: '/certs', source: pod.projected.dir, type: 'bind', options: ['rbind', 'ro'] }],
  });
  const podOf = (annotations) => ({ id: 's'.repeat(64), name: 'web-7d9c', uid: pod.uid, namespace: 'default', annotations });
  // The same pod with a 20-key secret volume read as envFrom: one volumeRef more, read
  // through the atomic writer's ..data.
  makeAtomicVolume(
    pod,
    'secret',
    'db',
    Object.fromEntries(
      Array.from({ length: 20 }, (_, i) => [`KEY_${String(i).padStart(2, '0')}`, `secret-value-${i}-${'x'.repeat(24)}\n`]),
    ),
  );
  const withSecret = [...envFrom, { prefix: 'DB_', volumeRef: { volumeName: 'db' } }];
  return {
    'typical annotated pod': {
      pod: podOf({
        ...k8s,
        'envhook.io/env': JSON.stringify({ app: env }),
        'envhook.io/envFrom': JSON.stringify({ app: envFrom }),
        'envhook.io/volumeOwners': JSON.stringify(owners),
      }),
      container: container({ 'io.kubernetes.cri.container-name': 'app' }),
      env: 111,
    },
    'typical pod + 20-key secret volume as envFrom': {
      pod: podOf({
        ...k8s,
        'envhook.io/env': JSON.stringify({ app: env }),
        'envhook.io/envFrom': JSON.stringify({ app: withSecret }),
        'envhook.io/volumeOwners': JSON.stringify(owners),
      }),
      container: container({ 'io.kubernetes.cri.container-name': 'app' }),
      env: 131,
    },
    unannotated: { pod: podOf(k8s), container: container({ 'io.kubernetes.cri.container-name': 'app' }), env: 0 },
  };
}

/**
 * Memory of one process in MiB: VmRSS (resident, the executable's mapped pages included),
 * RssAnon (its own memory), RssFile (mapped files: the executable, shared through the page cache
 * with every process running the same file) and Pss (proportional: a page shared by n processes
 * counts 1/n in each, so the Pss of processes adds up to what they take together).
 */
export function memOf(pid) {
  const st = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (text, field) => Number(text.match(new RegExp(`^${field}:\\s+(\\d+)`, 'm'))?.[1] ?? NaN) / 1024;
  const roll = fs.readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
  return { rss: kb(st, 'VmRSS'), anon: kb(st, 'RssAnon'), file: kb(st, 'RssFile'), pss: kb(roll, 'Pss') };
}
/** CPU time (user + system) of a process so far, ms (10 ms ticks: fair over many requests). */
export function cpuMs(pid) {
  const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(f[11]) + Number(f[12])) * 1000) / 100;
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Least-squares slope of ys over xs. */
function slope(xs, ys) {
  const n = xs.length;
  const mx = xs.reduce((a, b) => a + b, 0) / n;
  const my = ys.reduce((a, b) => a + b, 0) / n;
  let num = 0;
  let den = 0;
  for (let i = 0; i < n; i++) {
    num += (xs[i] - mx) * (ys[i] - my);
    den += (xs[i] - mx) ** 2;
  }
  return den ? num / den : 0;
}

/**
 * The daemons timed: the bundle on Node (the DaemonSet example's image can run it), and the
 * single executable a pre-installed plugin runs on a node (`envhook install --mode nri`), when
 * built. BENCH_NRI_NODE_FLAGS passes V8 flags to the bundle's Node (the supervisor's and, through
 * its execArgv, the worker's), for experiments.
 */
function daemons() {
  const bundle = {
    name: 'bundle',
    cmd: NODE,
    args: [...(process.env.BENCH_NRI_NODE_FLAGS?.split(' ').filter(Boolean) ?? []), path.join(REPO, 'dist/envhook.cjs')],
  };
  const sea = path.join(REPO, 'dist/envhook');
  // The single executable as `envhook install` writes it (src/fs/atomic-write.ts).
  const installed = { name: 'SEA', cmd: sea, args: [], place: (to) => atomicWrite(to, fs.readFileSync(sea), { newFileMode: 0o755 }) };
  return fs.existsSync(sea) ? [bundle, installed] : [bundle];
}

/** Node's own idle floor: a `node` with one timer, with Node's default V8 threads and with the daemon's one. */
async function nodeFloors() {
  const out = [];
  for (const [label, flags] of [
    ['node, one timer', []],
    [`node ${DAEMON_NODE_OPTION}, one timer`, [DAEMON_NODE_OPTION]],
  ]) {
    const p = spawn(NODE, [...flags, '-e', 'setInterval(() => {}, 1000)'], { env: benchEnv, stdio: 'ignore' });
    await sleep(IDLE_MS);
    out.push({ label, mem: memOf(p.pid) });
    p.kill('SIGKILL');
  }
  return out;
}

const IDLE_MS = 3000;
/** Requests per case: the typical pod's NRI_REQUESTS, the others (unannotated, with a secret volume) a tenth. */
const requestsOf = (label) => (label === 'typical annotated pod' ? NRI_REQUESTS : Math.max(1000, Math.round(NRI_REQUESTS / 10)));
const SAMPLE_EVERY = 1000;

export async function nriRow() {
  const go = goPlugin();
  if (go.skipped) console.error(`row 8: ${go.skipped}; timing without it`);
  const floors = await nodeFloors();
  const daemonsOut = [];
  for (const daemon of daemons()) daemonsOut.push(await nriRowsOf(daemon, go.bin));
  return { floors, daemons: daemonsOut, go: go.skipped };
}

async function waitFor(check, what, ms = 30_000) {
  const end = Date.now() + ms;
  for (;;) {
    const v = check();
    if (v) return v;
    if (Date.now() > end) throw new Error(`bench nri: timed out: ${what}`);
    await sleep(20);
  }
}

/** The floor process (bench/nri-floor.mjs) registered with the test peer `rt`: its process and its peer. */
export async function startFloor(rt) {
  const register = encode(Msg.Request, {
    service: RUNTIME_SERVICE,
    method: 'RegisterPlugin',
    payload: encode(Msg.RegisterPluginRequest, { pluginName: 'floor', pluginIdx: '99' }),
  });
  const registerHex = Buffer.concat(
    encodeMux(RUNTIME_CONN, encodeTtrpc({ streamId: 1, type: MessageType.Request, payload: register })),
  ).toString('hex');
  const proc = spawn(NODE, [path.join(REPO, 'bench/nri-floor.mjs'), rt.socketPath, registerHex], { env: benchEnv, stdio: 'ignore' });
  return { proc, peer: await rt.nextPlugin() };
}

async function nriRowsOf(daemon, goBin) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'envhook-bench-nri-'));
  const rt = await startFakeRuntime({ dir });
  const procs = [];
  // The run directory on tmpfs, as /run/envhook on a node: the owned copy is written there.
  const runDir = fs.mkdtempSync(path.join(process.env.BENCH_BUNDLE_DIR ?? '/dev/shm', 'envhook-bench-nri-run-'));
  try {
    const config = path.join(dir, 'config.json');
    const kubeletRoot = path.join(dir, 'kubelet');
    fs.writeFileSync(config, JSON.stringify({ kubeletRoot, runDir }));
    const cmd = daemon.place ? path.join(dir, 'envhook') : daemon.cmd;
    daemon.place?.(cmd);
    const envhook = spawn(cmd, [...daemon.args, 'nri', '--socket', rt.socketPath], {
      env: { ...benchEnv, ENVHOOK_CONFIG: config },
      stdio: 'ignore',
    });
    procs.push(envhook);
    const died = new Promise((_, reject) =>
      envhook.once('exit', (code) => reject(new Error(`envhook nri exited (${code}) before registering`))),
    );
    const plugin = await Promise.race([rt.nextPlugin(), died]);
    died.catch(() => {});
    // `envhook nri` is a supervisor (the pid started) and its worker, which holds the connection
    // and does the work (src/nri/supervisor/supervisor.ts): the worker's pid from the status file.
    const statusFile = path.join(runDir, 'nri-status.json');
    const workerPid = await waitFor(() => {
      try {
        const st = JSON.parse(fs.readFileSync(statusFile, 'utf8'));
        return st.connected && st.workerPid;
      } catch {
        return undefined;
      }
    }, 'the status file names a connected worker');
    const supervisorPid = envhook.pid;
    const { proc: floorProc, peer: floor } = await startFloor(rt);
    procs.push(floorProc);
    // The Go plugin on NRI's own stub (bench/go-plugin), given the same requests; the annotated
    // one names a 50-variable env file for it to read.
    let go;
    let goPid;
    if (goBin) {
      const goProc = spawn(goBin, ['-socket', rt.socketPath], { stdio: 'ignore' });
      procs.push(goProc);
      go = await rt.nextPlugin();
      goPid = goProc.pid;
    }
    const goEnvFile = path.join(dir, 'go-plugin.env');
    fs.writeFileSync(goEnvFile, envFileText({ count: 50, prefix: 'GO_' }));
    await sleep(IDLE_MS);
    const idle = { worker: memOf(workerPid), supervisor: memOf(supervisorPid), go: goPid && memOf(goPid) };
    const cases = [];
    for (const [label, { env: wantEnv, ...req }] of Object.entries(nriRequests(kubeletRoot))) {
      // Timed only once the plugin is seen doing the work: the adjustment carries every variable.
      const first = (await plugin.createContainer(req, 5000)).adjust;
      const adjusted = first?.env?.length ?? 0;
      if (adjusted !== wantEnv) throw new Error(`bench nri: ${label}: the adjustment sets ${adjusted} variables, not ${wantEnv}`);
      const copied = first?.mounts?.find((m) => m.destination === '/certs')?.source ?? '';
      if (wantEnv && !copied.startsWith(runDir))
        throw new Error(`bench nri: ${label}: the adjustment does not point /certs at an owned copy under ${runDir}`);
      const goReq = wantEnv
        ? { ...req, pod: { ...req.pod, annotations: { ...req.pod.annotations, 'bench.envhook.io/envfile': goEnvFile } } }
        : req;
      if (go) {
        const goAdjusted = (await go.createContainer(goReq, 5000)).adjust?.env?.length ?? 0;
        if (goAdjusted !== (wantEnv ? 50 : 0))
          throw new Error(`bench nri: ${label}: the Go plugin's adjustment sets ${goAdjusted} variables`);
      }
      const payload = encode(Msg.CreateContainerRequest, req);
      const goPayload = encode(Msg.CreateContainerRequest, goReq);
      const sides = [
        { p: plugin, payload, times: [] },
        { p: floor, payload, times: [] },
        ...(go ? [{ p: go, payload: goPayload, times: [] }] : []),
      ];
      const call = (s) => s.p.call('CreateContainer', s.payload, 5000);
      for (let i = 0; i < 500; i++) for (const s of sides) await call(s); // warm-up
      const n = requestsOf(label);
      const samples = [{ at: 0, worker: memOf(workerPid), supervisor: memOf(supervisorPid), go: goPid && memOf(goPid) }];
      const load = loadavg();
      const cpuPids = { worker: workerPid, supervisor: supervisorPid, floor: floorProc.pid, go: goPid };
      const cpu0 = Object.fromEntries(
        Object.entries(cpuPids)
          .filter(([, pid]) => pid)
          .map(([k, pid]) => [k, cpuMs(pid)]),
      );
      for (let i = 1; i <= n; i++) {
        // The order rotates, so that no side always follows another.
        for (let k = 0; k < sides.length; k++) {
          const s = sides[(i + k) % sides.length];
          const t0 = process.hrtime.bigint();
          await call(s);
          s.times.push(Number(process.hrtime.bigint() - t0) / 1e6);
        }
        if (i % SAMPLE_EVERY === 0)
          samples.push({ at: i, worker: memOf(workerPid), supervisor: memOf(supervisorPid), go: goPid && memOf(goPid) });
      }
      const cpu = Object.fromEntries(Object.entries(cpu0).map(([k, v]) => [k, (cpuMs(cpuPids[k]) - v) / n]));
      const [ours, base, goTimes] = sides.map((s) => s.times.sort((a, b) => a - b));
      cases.push({
        label: `${label} (${daemon.name})`,
        requests: n,
        bytes: payload.length,
        load,
        p50: percentileOfSorted(ours, 50),
        p99: percentileOfSorted(ours, 99),
        base50: percentileOfSorted(base, 50),
        base99: percentileOfSorted(base, 99),
        go50: goTimes && percentileOfSorted(goTimes, 50),
        go99: goTimes && percentileOfSorted(goTimes, 99),
        samples,
        cpu,
      });
    }
    return { name: daemon.name, idle, cases };
  } finally {
    for (const p of procs) p.kill('SIGTERM');
    // envhook writes its last status into the run directory as it stops: removed after its exit.
    await Promise.race([Promise.all(procs.map((p) => p.exitCode ?? p.signalCode ?? new Promise((r) => p.once('exit', r)))), sleep(10_000)]);
    await rt.close();
    fs.rmSync(dir, { recursive: true, force: true });
    fs.rmSync(runDir, { recursive: true, force: true });
  }
}

const f1 = (x) => (x === undefined || Number.isNaN(x) ? '–' : x.toFixed(1));
const f3 = (x) => (x === undefined ? '–' : x.toFixed(3));
const sgn = (x, f = f3) => (x === undefined ? '–' : `${x >= 0 ? '+' : ''}${f(x)}`);
const series = (xs) => `${f1(xs[0])} → ${f1(Math.max(...xs))} → ${f1(xs.at(-1))}`;
/** MiB per 100,000 requests, over the samples after the first tenth of the run (V8's heap settles). */
const slopeOf = (samples, pick) => {
  const from = samples.filter((s) => s.at >= samples.at(-1).at / 10);
  return (
    slope(
      from.map((s) => s.at),
      from.map(pick),
    ) * 100_000
  );
};

export function nriSection({ floors, daemons: ds, go }) {
  const floor = floors[1].mem;
  const budget = floor.rss + 8;
  const memRow = (label, m, extra = '') => `| ${label} | ${f1(m.rss)} | ${f1(m.anon)} | ${f1(m.file)} | ${f1(m.pss)} | ${extra} |`;
  const idleRows = [
    ...floors.map((f) => memRow(f.label, f.mem, 'floor')),
    ...ds.flatMap((d) => [
      memRow(
        `envhook nri (${d.name}): worker`,
        d.idle.worker,
        `${sgn(d.idle.worker.rss - floor.rss, f1)} MiB over the floor: ${d.idle.worker.rss <= budget ? 'met' : 'NOT met'}`,
      ),
      memRow(`envhook nri (${d.name}): supervisor`, d.idle.supervisor),
      `| envhook nri (${d.name}): both | ${f1(d.idle.worker.rss + d.idle.supervisor.rss)} | ${f1(d.idle.worker.anon + d.idle.supervisor.anon)} | – | ${f1(d.idle.worker.pss + d.idle.supervisor.pss)} | sum; RssFile is the same executable's pages, counted in both VmRSS; Pss adds up |`,
    ]),
    ...(ds[0]?.idle.go ? [memRow('Go plugin (NRI stub)', ds[0].idle.go)] : []),
  ];
  const runRows = ds.flatMap((d) =>
    d.cases.map((c) => {
      const w = c.samples.map((s) => s.worker.rss);
      const wSlope = slopeOf(c.samples, (s) => s.worker.rss);
      const aSlope = slopeOf(c.samples, (s) => s.worker.anon);
      const sup = c.samples.map((s) => s.supervisor.rss);
      const supAnon = c.samples.map((s) => s.supervisor.anon);
      const pss = c.samples.map((s) => s.worker.pss + s.supervisor.pss);
      const goRss = c.samples[0].go ? series(c.samples.map((s) => s.go.rss)) : '–';
      const ok = Math.max(...w) <= budget && Math.abs(wSlope) < 1;
      return `| ${c.label} | ${c.requests} | ${series(w)} | ${series(c.samples.map((s) => s.worker.anon))} | ${sgn(wSlope, f1)} / ${sgn(aSlope, f1)} | ${series(sup)} | ${series(supAnon)} | ${series(pss)} | ${goRss} | ${ok ? 'met' : 'NOT met'} | ${c.load} |`;
    }),
  );
  const timeRows = ds.flatMap((d) =>
    d.cases.map((c) => {
      const own = c.p50 - c.base50;
      const goOwn = c.go50 === undefined ? undefined : c.go50 - c.base50;
      return `| ${c.label} | ${c.requests} | ${c.bytes} | ${f3(c.p50)} | ${f3(c.p99)} | ${f3(c.base50)} | ${f3(c.base99)} | ${sgn(own)} | ${own < 0.5 ? 'met' : 'NOT met'} | ${f3(c.cpu.worker)} + ${f3(c.cpu.supervisor)} | ${f3(c.cpu.floor)} | ${f3(c.go50)} | ${f3(c.go99)} | ${sgn(goOwn)} | ${f3(c.cpu.go)} | ${c.load} |`;
    }),
  );
  return `## NRI plugin (row 8): CreateContainer through \`envhook nri\`

CreateContainer requests from the test peer that plays the runtime's side
(test/helpers/nri/runtime.ts), one in flight, ${NRI_REQUESTS} of the typical annotated pod and a tenth of
that for the unannotated one and for the typical pod with a 20-key secret volume read as envFrom
(\`volumeRef\`, through \`..data\`: docs/env-volumes.md), each request sent in turn to envhook, to the floor
(bench/nri-floor.mjs: NRI framing only, an empty response, no decoding, no handler) and to the Go
plugin on NRI's own stub (bench/go-plugin: it reads one env file of 50 variables named by a pod
annotation${go ? `; not run: ${go}` : ''}), the order rotating. Round trip in ms as the peer sees it; "own" is a
plugin's p50 minus the floor's. The handler is the pipeline's: the annotated request reads the
typical pod's env files, and its container mounts the pod's 100-file projected volume with owners,
which it reads through envhook's owned copy (run directory on tmpfs, as /run/envhook on a node): made
at the first request, used as it is by the next ones while the kubelet's payload is unchanged, as for
a pod's other containers and restarts (docs/ownership.md). Two daemons, one after the other: "bundle" is \`dist/envhook.cjs\` on Node
${process.version}; "SEA" is the single executable \`dist/envhook\`, what a pre-installed plugin runs on a
node, written as \`envhook install\` writes it (64 KiB at a time: the page cache keeps a file in
folios the size of its writes). \`envhook nri\` is two processes (docs/nri.md): the supervisor, the
pid started, and its worker, which holds the connection and runs the handler (its pid from the
status file); both run as src/nri/process.ts sets them up (the worker with Maglev on, TurboFan
off, \`--optimize-for-size\`; both with one V8 worker thread, \`${DAEMON_NODE_OPTION}\`).

Memory at idle (registered, ${IDLE_MS / 1000} s after the Go plugin connected, before any request), MiB.
VmRSS includes the executable's pages (RssFile): the supervisor and the worker run the same
file, so those pages are in memory once, and Pss (each shared page divided among the processes
mapping it) is the figure that adds up. Target: the worker's VmRSS ≤ Node's floor
(a \`node\` with one timer and the daemon's \`${DAEMON_NODE_OPTION}\`) + 8 MiB = ${f1(budget)} MiB.

| process | VmRSS | RssAnon | RssFile | Pss | |
|---|---|---|---|---|---|
${idleRows.join('\n')}

Memory over the requests (sampled every ${SAMPLE_EVERY}; start → max → end), MiB; slope by least
squares over the samples after the first tenth of the run, MiB per 100,000 requests. Target: the
worker's VmRSS ≤ ${f1(budget)} MiB throughout and flat (|slope| < 1 MiB per 100,000).

| case | requests | worker VmRSS | worker RssAnon | worker slope VmRSS / RssAnon | supervisor VmRSS | supervisor RssAnon | Pss both | Go plugin VmRSS | ≤ floor + 8, flat | load |
|---|---|---|---|---|---|---|---|---|---|---|
${runRows.join('\n')}

Time per CreateContainer, ms. Target: envhook's own p50 < 0.5 ms (judged on the
wall-clock round trips). CPU: user + system time of each process over the run divided by the
requests (from /proc/PID/stat), which moves far less with the machine's load than wall time;
envhook's is the worker's plus the supervisor's (the heartbeat carrying each request's duration).
envhook logs at its default level, info, to stderr (here /dev/null, as for a pre-installed plugin):
one \`nri: adjusted\` line per annotated request, with the variables' names.

| case | requests | request bytes | envhook p50 | envhook p99 | floor p50 | floor p99 | own p50 | < 0.5 ms | envhook CPU worker + supervisor | floor CPU | Go p50 | Go p99 | Go own p50 | Go CPU | load |
|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|
${timeRows.join('\n')}
`;
}

/** Puts the section into bench/RESULTS.md in place of an earlier one (the other rows stay). */
export function writeNriSection(section) {
  writeResultsSection('## NRI plugin (row 8)', section);
}

/**
 * Replaces the section that starts with `heading` (up to the next `## ` or bench/watch.ts's
 * marker) in bench/RESULTS.md; a new one goes before bench/watch.ts's section, which owns the
 * file's end.
 */
export function writeResultsSection(heading, section) {
  const file = path.join(REPO, 'bench/RESULTS.md');
  const old = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '# envhook benchmark results\n';
  const start = old.indexOf(heading);
  const watchAt = old.indexOf('<!-- bench/watch.ts -->');
  const at = start >= 0 ? start : watchAt >= 0 ? watchAt : old.length;
  const rest = start < 0 ? old.slice(at) : (old.slice(start + 1).match(/\n(## |<!-- bench\/watch\.ts -->)[\s\S]*$/)?.[0] ?? '');
  const head = start < 0 ? old.slice(0, at).trimEnd() + '\n\n' : old.slice(0, start);
  fs.writeFileSync(file, head + section + (start < 0 && rest ? '\n' : '') + rest);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const rows = await nriRow();
  const section = nriSection(rows);
  writeNriSection(section);
  console.log(section);
}
