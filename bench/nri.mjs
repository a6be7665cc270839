// Row 8: `envhook nri` (the bundle, dist/envhook.cjs) driven by the test peer that plays the
// runtime's side (test/helpers/nri-runtime.ts): N CreateContainer requests at full speed, one in
// flight, alternating with the same request to the floor process (bench/nri-floor.mjs), so the
// machine's load hits both alike. Reports round-trip p50/p99 of each, their difference (the
// plugin's own time), and the daemon's RSS every 500 requests. The handler is the pipeline's
// (src/nri/handler.ts), reading the typical pod's files from a kubelet root of the bench's own.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { benchEnv, loadavg } from './harness.mjs';
import { NODE, REPO } from './cli.mjs';
import { envFileText, makePod } from './fixtures.mjs';
import { makeAtomicVolume } from '../scripts/kubelet-pod.ts';
import { startFakeRuntime } from '../test/helpers/nri-runtime.ts';
import { encode, Msg } from '../src/nri/descriptors.ts';
import { atomicWrite } from '../src/fs/atomic-write.ts';
import { encodeMux, encodeTtrpc, MessageType, RUNTIME_CONN } from '../src/nri/frames.ts';
import { RUNTIME_SERVICE } from '../src/nri/schema.ts';

export const NRI_REQUESTS = Number(process.env.BENCH_NRI_REQUESTS) || 10_000;

/**
 * A typical annotated pod's CreateContainer (as containerd sends it), and an unannotated one.
 * The annotated pod is the benchmarks' typical pod (bench/fixtures.mjs: 10 fileKeyRefs, a
 * `$(VAR)` value, 2 envFrom files of 50, 100 projected files chowned) under a kubelet root of
 * the bench's own, without its service-link switch: NRI on containerd 2.1 drops env removals,
 * so envhook refuses them there (docs/nri.md) and the request would time the error path.
 */
export function nriRequests(kubeletRoot) {
  const pod = makePod(kubeletRoot, {
    envFiles: { 'keys.env': envFileText({ count: 10, prefix: 'KEY_' }), 'a.env': envFileText({ count: 50 }), 'b.env': envFileText({ count: 50 }) },
    projectedFiles: 100,
  });
  const env = Array.from({ length: 10 }, (_, i) => ({ name: `FROM_FILE_${i}`, valueFrom: { fileKeyRef: { volumeName: 'config', path: 'keys.env', key: `KEY_${String(i).padStart(5, '0')}` } } }));
  env.push({ name: 'GREETING', value: 'hello $(FROM_FILE_0) $$HOME' });
  const envFrom = [{ prefix: 'A_', fileRef: { volumeName: 'config', path: 'a.env' } }, { prefix: 'B_', fileRef: { volumeName: 'config', path: 'b.env' } }];
  const owners = [{ volume: 'certs', defaultUser: 1000, items: [{ path: 'file-00000.pem', user: 0 }] }];
  const k8s = { 'io.kubernetes.cri.sandbox-uid': pod.uid, 'io.kubernetes.cri.sandbox-name': 'web-7d9c', 'io.kubernetes.cri.sandbox-namespace': 'default', 'kubernetes.io/config.seen': '2026-11-23T10:00:00Z', 'kubernetes.io/config.source': 'api' };
  const container = (annotations) => ({
    id: 'c'.repeat(64), podSandboxId: 's'.repeat(64), name: 'app', annotations,
    env: [...Array.from({ length: 50 }, (_, i) => `SVC${i}_SERVICE_HOST=10.0.${i}.1`), 'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', 'HOSTNAME=web-7d9c'],
    mounts: pod.mounts('app'),
  });
  const podOf = (annotations) => ({ id: 's'.repeat(64), name: 'web-7d9c', uid: pod.uid, namespace: 'default', annotations });
  // The same pod with a 20-key secret volume read as envFrom (issue 25, SPEC §10): one
  // volumeRef more, read through the atomic writer's ..data.
  makeAtomicVolume(pod, 'secret', 'db', Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`KEY_${String(i).padStart(2, '0')}`, `secret-value-${i}-${'x'.repeat(24)}\n`])));
  const withSecret = [...envFrom, { prefix: 'DB_', volumeRef: { volumeName: 'db' } }];
  return {
    'typical annotated pod': { pod: podOf({ ...k8s, 'envhook.io/env': JSON.stringify({ app: env }), 'envhook.io/envFrom': JSON.stringify({ app: envFrom }), 'envhook.io/volumeOwners': JSON.stringify(owners) }), container: container({ 'io.kubernetes.cri.container-name': 'app' }), env: 111 },
    'typical pod + 20-key secret volume as envFrom': { pod: podOf({ ...k8s, 'envhook.io/env': JSON.stringify({ app: env }), 'envhook.io/envFrom': JSON.stringify({ app: withSecret }), 'envhook.io/volumeOwners': JSON.stringify(owners) }), container: container({ 'io.kubernetes.cri.container-name': 'app' }), env: 131 },
    unannotated: { pod: podOf(k8s), container: container({ 'io.kubernetes.cri.container-name': 'app' }), env: 0 },
  };
}

const status = (pid, field) => Number(fs.readFileSync(`/proc/${pid}/status`, 'utf8').match(new RegExp(`${field}:\\s+(\\d+)`))[1]) / 1024;
/** VmRSS counts Node's own binary pages (~40 MiB, shared with every Node process); RssAnon is the process's own memory. */
const rssMiB = (pid) => status(pid, 'VmRSS');
const anonMiB = (pid) => status(pid, 'RssAnon');
const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

/**
 * The daemons timed: the bundle on Node (the DaemonSet example's image can run it), and the
 * single executable a pre-installed plugin runs on a node (`envhook install --mode nri`), when
 * built. BENCH_NRI_NODE_FLAGS passes V8 flags to the bundle's Node, for experiments.
 */
function daemons() {
  const bundle = { name: 'bundle', cmd: NODE, args: [...(process.env.BENCH_NRI_NODE_FLAGS?.split(' ').filter(Boolean) ?? []), path.join(REPO, 'dist/envhook.cjs')] };
  const sea = path.join(REPO, 'dist/envhook');
  // The single executable as `envhook install` writes it (src/fs/atomic-write.ts).
  const installed = { name: 'SEA', cmd: sea, args: [], place: (to) => atomicWrite(to, fs.readFileSync(sea), { newFileMode: 0o755 }) };
  return fs.existsSync(sea) ? [bundle, installed] : [bundle];
}

export async function nriRow() {
  const rows = [];
  for (const daemon of daemons()) rows.push(...(await nriRowsOf(daemon)));
  return rows;
}

async function nriRowsOf(daemon) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'envhook-bench-nri-'));
  const rt = await startFakeRuntime({ dir });
  const procs = [];
  try {
    const config = path.join(dir, 'config.json');
    const kubeletRoot = path.join(dir, 'kubelet');
    fs.writeFileSync(config, JSON.stringify({ kubeletRoot, runDir: path.join(dir, 'run') }));
    const cmd = daemon.place ? path.join(dir, 'envhook') : daemon.cmd;
    daemon.place?.(cmd);
    const envhook = spawn(cmd, [...daemon.args, 'nri', '--socket', rt.socketPath], { env: { ...benchEnv, ENVHOOK_CONFIG: config }, stdio: ['ignore', 'ignore', 'inherit'] });
    procs.push(envhook);
    const died = new Promise((_, reject) => envhook.once('exit', (code) => reject(new Error(`envhook nri exited (${code}) before registering`))));
    const plugin = await Promise.race([rt.nextPlugin(), died]);
    died.catch(() => {});
    const register = encode(Msg.Request, { service: RUNTIME_SERVICE, method: 'RegisterPlugin', payload: encode(Msg.RegisterPluginRequest, { pluginName: 'floor', pluginIdx: '99' }) });
    const registerHex = Buffer.concat(encodeMux(RUNTIME_CONN, encodeTtrpc({ streamId: 1, type: MessageType.Request, payload: register }))).toString('hex');
    const floorProc = spawn(NODE, [path.join(REPO, 'bench/nri-floor.mjs'), rt.socketPath, registerHex], { env: benchEnv, stdio: 'ignore' });
    procs.push(floorProc);
    const floor = await rt.nextPlugin();
    const rows = [];
    for (const [label, { env: wantEnv, ...req }] of Object.entries(nriRequests(kubeletRoot))) {
      // Timed only once the plugin is seen doing the work: the adjustment carries every variable.
      const adjusted = (await plugin.createContainer(req, 5000)).adjust?.env?.length ?? 0;
      if (adjusted !== wantEnv) throw new Error(`bench nri: ${label}: the adjustment sets ${adjusted} variables, not ${wantEnv}`);
      const payload = encode(Msg.CreateContainerRequest, req);
      const call = (p) => p.call('CreateContainer', payload, 5000);
      for (let i = 0; i < 500; i++) await Promise.all([call(plugin), call(floor)]); // warm-up
      const ours = [];
      const base = [];
      const rss = [rssMiB(envhook.pid)];
      const anon = [anonMiB(envhook.pid)];
      const load = loadavg();
      for (let i = 1; i <= NRI_REQUESTS; i++) {
        for (const [p, into] of i % 2 ? [[plugin, ours], [floor, base]] : [[floor, base], [plugin, ours]]) {
          const t0 = process.hrtime.bigint();
          await call(p);
          into.push(Number(process.hrtime.bigint() - t0) / 1e6);
        }
        if (i % 500 === 0) {
          rss.push(rssMiB(envhook.pid));
          anon.push(anonMiB(envhook.pid));
        }
      }
      ours.sort((a, b) => a - b);
      base.sort((a, b) => a - b);
      rows.push({ label: `${label} (${daemon.name})`, bytes: payload.length, p50: pct(ours, 50), p99: pct(ours, 99), base50: pct(base, 50), base99: pct(base, 99), rss, anon, load });
    }
    return rows;
  } finally {
    for (const p of procs) p.kill('SIGTERM');
    await rt.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const f2 = (x) => x.toFixed(3);
const series = (xs) => `${xs[0].toFixed(1)} → ${Math.max(...xs).toFixed(1)} → ${xs.at(-1).toFixed(1)}`;

export function nriSection(rows) {
  const lines = rows.map((r) => {
    const own = r.p50 - r.base50;
    const rssFlat = Math.max(...r.rss.slice(2)) - r.rss[2];
    return `| ${r.label} | ${r.bytes} | ${f2(r.p50)} | ${f2(r.p99)} | ${f2(r.base50)} | ${f2(r.base99)} | ${own >= 0 ? '+' : ''}${f2(own)} | ${own < 1 ? 'met' : 'NOT met'} | ${series(r.rss)} | ${series(r.anon)} | ${Math.max(...r.rss) <= 64 && rssFlat < 4 ? 'met' : 'NOT met'} | ${r.load} |`;
  });
  return `## NRI plugin (row 8): CreateContainer through \`envhook nri\`

${NRI_REQUESTS} CreateContainer requests per case from the test peer that plays the runtime's side
(test/helpers/nri-runtime.ts), one in flight, alternating with the same request to the floor
(bench/nri-floor.mjs: NRI framing only, an empty response, no decoding, no handler). Round trip
in ms as the peer sees it; "own" is envhook's p50 minus the floor's: the plugin's own time.
The handler is the pipeline's: the annotated request reads the typical pod's env files and
walks its 100 projected files (owners already right after the first request, as on a node);
the next case adds a 20-key secret volume read as envFrom (\`volumeRef\`, through \`..data\`).
Two daemons, one after the other: "bundle" is \`dist/envhook.cjs\` on Node ${process.version}; "SEA" is
the single executable \`dist/envhook\`, what a pre-installed plugin runs on a node, written as
\`envhook install\` writes it (64 KiB at a time: the page cache keeps a file in folios the size
of its writes, and the same executable written in one write counted ~27 MiB more RssFile).
Both run as \`envhook nri\` sets itself up (src/nri/process.ts): Maglev on, TurboFan off,
\`--optimize-for-size\`, one V8 worker thread (\`--v8-pool-size=1\` through NODE_OPTIONS).
Memory of the daemon at the start of the timed requests (after a 500-request warm-up), its
maximum, and at the end: VmRSS, which includes the executable's pages (a bare \`node\` idles at
~43 MiB), and RssAnon, the daemon's own memory. Flat: VmRSS grows by less than 4 MiB after the
first 1,000 requests. Targets: own p50 < 1 ms; VmRSS flat and ≤ 64 MiB.

| case | request bytes | envhook p50 | envhook p99 | floor p50 | floor p99 | own p50 | < 1 ms | VmRSS MiB start → max → end | RssAnon MiB start → max → end | flat, ≤ 64 MiB | load |
|---|---|---|---|---|---|---|---|---|---|---|---|
${lines.join('\n')}
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
  const rest = start < 0 ? old.slice(at) : old.slice(start + 1).match(/\n(## |<!-- bench\/watch\.ts -->)[\s\S]*$/)?.[0] ?? '';
  const head = start < 0 ? old.slice(0, at).trimEnd() + '\n\n' : old.slice(0, start);
  fs.writeFileSync(file, head + section + (start < 0 && rest ? '\n' : '') + rest);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const rows = await nriRow();
  const section = nriSection(rows);
  writeNriSection(section);
  console.log(section);
}
