// Row 10 (issue 13): CreateContainer+StartContainer over CRI on one private containerd 2.1.9
// (Debian sid) with NRI on, pods with no runtimeClassName (the runc handler), with `envhook nri`
// registered against without it: the plugin runs (dist/envhook.cjs) in alternating blocks of
// starts and is stopped in between, so both sides run on the same containerd in the same run.
// Cases: the typical annotated container of row 7 without its service-link switch (NRI cannot
// remove variables), and a container of a pod without envhook annotations. Without the plugin,
// the annotated container starts without its env (NRI fails open): that is the baseline.
// Target (issue 13): at most +3 ms median. Writes its own section into bench/RESULTS.md.
// Run: node bench/cri-nri.mjs (after npm run build, as root).
import fs from 'node:fs';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { RUNS, benchEnv, loadavg, median } from './harness.mjs';
import { NODE, REPO } from './cli.mjs';
import { typicalPod, SERVICES, removeContainer } from './cri.mjs';
import { missingForCri, prepareCriContainerd } from '../test/helpers/cri-containerd.ts';
import { runPod } from '../test/helpers/cri-pod.ts';

const START = '<!-- row 10: CRI with NRI -->';
const END = '<!-- end of row 10 -->';
const BLOCKS = ['on', 'off', 'off', 'on', 'on', 'off'];

function until(check, what, ms = 60_000) {
  const end = Date.now() + ms;
  return new Promise((resolve, reject) => {
    const tick = () => (check() ? resolve() : Date.now() > end ? reject(new Error(`timed out: ${what}`)) : setTimeout(tick, 20));
    tick();
  });
}

const skip = missingForCri('2.1') ?? (fs.existsSync(path.join(REPO, 'dist/envhook.cjs')) ? undefined : 'dist/envhook.cjs not built');
if (skip) {
  console.error(`row 10: skipped, ${skip}`);
  process.exit(0);
}
const c = prepareCriContainerd({ version: '2.1', nri: true, tmpBase: process.env.BENCH_BUNDLE_DIR ?? '/dev/shm' });
await c.start();
const kubeletRoot = path.join(c.dir, 'kubelet');
const config = path.join(c.dir, 'envhook-bench.json');
fs.writeFileSync(config, '{}\n');
const containerdLog = () => fs.readFileSync(c.paths.log, 'utf8');
let plugin;
async function pluginOn() {
  const from = containerdLog().length;
  plugin = spawn(NODE, [path.join(REPO, 'dist/envhook.cjs'), 'nri', '--socket', c.paths.nriSocket, '--kubelet-root', kubeletRoot, ...(process.env.BENCH_NRI_LOG ? ['--log-file', process.env.BENCH_NRI_LOG, '--log-level', 'debug'] : [])], { env: { ...benchEnv, NODE_EXTRA_CA_CERTS: '', ENVHOOK_CONFIG: config }, stdio: 'ignore' });
  await until(() => /plugin \\"50-envhook\\" connected and synchronized/.test(containerdLog().slice(from)), 'plugin connected');
}
async function pluginOff() {
  const p = plugin;
  plugin = undefined;
  const from = containerdLog().length;
  p.kill('SIGTERM');
  await new Promise((r) => p.once('exit', r));
  await until(() => /50-envhook/.test(containerdLog().slice(from)), 'containerd saw the plugin go', 10_000).catch(() => undefined);
}

const load0 = loadavg();
const typical = typicalPod();
const { 'envhook.io/serviceLinks': _links, ...annotations } = typical.annotations;
const cases = [
  { name: 'typical annotated (no service-link switch)', pod: { ...typical, annotations }, container: { name: 'app', command: ['sleep', '3600'], env: SERVICES, volumeMounts: { certs: '/etc/certs' } }, check: 'FROM_FILE_0' },
  { name: 'unannotated pod', pod: {}, container: { name: 'app', command: ['sleep', '3600'], env: SERVICES } },
];
const out = [];
try {
  for (const k of cases) {
    const pod = await runPod(c, kubeletRoot, { name: `bench-nri-${out.length}`, handler: '', ...k.pod });
    const times = { on: [], off: [] };
    const per = Math.ceil(RUNS / 3) + 1; // the first start of each block is a warm-up
    for (const block of BLOCKS) {
      if (block === 'on') await pluginOn();
      for (let i = 0; i < per; i++) {
        const t0 = performance.now();
        const id = await pod.create(k.container);
        await pod.start(id);
        const ms = performance.now() - t0;
        if (i === 0 && k.check) {
          const r = await pod.execSync(id, ['sh', '-c', `env | grep -q '^${k.check}='`]);
          if ((r.exitCode === 0) !== (block === 'on')) throw new Error(`row 10: ${k.name}: env ${block === 'on' ? 'missing with' : 'present without'} the plugin`);
        }
        if (i > 0) times[block].push(ms);
        await removeContainer(c.cri, id);
      }
      if (block === 'on') await pluginOff();
    }
    await pod.remove();
    out.push({ name: k.name, on: median(times.on), off: median(times.off), n: times.on.length });
  }
} finally {
  if (plugin) await pluginOff();
  const left = await c.stop();
  if (left.processes.length || left.mounts.length) console.error(`row 10: containerd left ${JSON.stringify(left)}`);
}
const f = (x) => x.toFixed(1);
const section = `${START}
## CRI with NRI (row 10): CreateContainer+StartContainer on containerd 2.1.9, \`envhook nri\` registered against not

Measured by \`node bench/cri-nri.mjs\` on ${new Date().toISOString().replace(/\.\d+Z$/, 'Z')} (load average ${load0} at start, ${loadavg()} at end) on one
private containerd 2.1.9 (Debian sid) with CRI and NRI on, pods with no runtimeClassName; the plugin
(\`dist/envhook.cjs\` on Node ${process.version}) connected in blocks and stopped between them
(${BLOCKS.join(' ')}), the first start of each block left out; median wall time of the two CRI
calls as the kubelet makes them. Without the plugin the annotated container starts without its
env (NRI fails open). Target: at most +3 ms.

| case | starts each | plugin registered ms | not registered ms | Δ ms | ≤ +3 ms |
|---|---|---|---|---|---|
${out.map((r) => `| ${r.name} | ${r.n} | ${f(r.on)} | ${f(r.off)} | ${r.on - r.off >= 0 ? '+' : ''}${f(r.on - r.off)} | ${r.on - r.off <= 3 ? 'met' : 'NOT met'} |`).join('\n')}
${END}`;
console.log(section);
const results = path.join(REPO, 'bench/RESULTS.md');
const text = fs.existsSync(results) ? fs.readFileSync(results, 'utf8') : '';
const at = text.indexOf(START);
const end = text.indexOf(END);
const watchAt = text.indexOf('<!-- bench/watch.ts -->');
const next =
  at >= 0 && end > at
    ? text.slice(0, at) + section + text.slice(end + END.length)
    : watchAt >= 0
      ? `${text.slice(0, watchAt)}${section}\n\n${text.slice(watchAt)}`
      : `${text.trimEnd()}\n\n${section}\n`;
fs.writeFileSync(results, next);
