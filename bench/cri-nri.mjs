// Row 10: CreateContainer+StartContainer over CRI on one private containerd 2.1.9
// (Debian sid) with NRI on, pods with no runtimeClassName (the runc handler), with `envhook nri`
// registered against without it: the plugin runs (dist/envhook.cjs) in alternating blocks of
// starts and is stopped in between, so both sides run on the same containerd in the same run.
// Cases: the typical annotated container of row 7 without its service-link switch (NRI cannot
// remove variables), and a container of a pod without envhook annotations. Without the plugin,
// the annotated container starts without its env (NRI fails open): that is the baseline.
// A third side, when it can be built: a Go plugin on NRI's own stub that reads one env file of
// 50 variables (bench/go-plugin.mjs), the kind of plugin envhook is compared against.
// Target: at most +3 ms median. Writes its own section into bench/RESULTS.md.
// Run: node bench/cri-nri.mjs (after npm run build, as root).
import fs from 'node:fs';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { RUNS, benchEnv, loadavg, median } from './harness.mjs';
import { NODE, REPO } from './cli.mjs';
import { typicalPod, SERVICES, removeContainer } from './cri.mjs';
import { missingForCri, prepareCriContainerd } from '../test/helpers/cri/containerd.ts';
import { runPod } from '../test/helpers/cri/pod.ts';
import { envFileText } from './fixtures.mjs';
import { goPlugin } from './go-plugin.mjs';
import { replaceMarkedSection } from './sections.mjs';

const START = '<!-- row 10: CRI with NRI -->';
const END = '<!-- end of row 10 -->';
// BENCH_BEFORE=DIR: a fourth side, the earlier build DIR/dist/envhook.cjs (bench/README.md,
// "Before and after"), timed in the same blocks as the current one.
const BEFORE = process.env.BENCH_BEFORE ? path.join(process.env.BENCH_BEFORE, 'dist/envhook.cjs') : undefined;
if (BEFORE && !fs.existsSync(BEFORE)) throw new Error(`row 10: BENCH_BEFORE: ${BEFORE} not found`);
// Each side three times, in early, middle and late positions.
const BLOCKS = BEFORE
  ? ['envhook', 'none', 'before', 'go', 'go', 'before', 'none', 'envhook', 'envhook', 'before', 'go', 'none']
  : ['envhook', 'none', 'go', 'go', 'none', 'envhook', 'envhook', 'go', 'none'];

function until(check, what, ms = 60_000) {
  const end = Date.now() + ms;
  return new Promise((resolve, reject) => {
    const tick = () => (check() ? resolve() : Date.now() > end ? reject(new Error(`timed out: ${what}`)) : setTimeout(tick, 20));
    tick();
  });
}

// BENCH_CRI_NRI_CONTAINERD=1.7: Debian trixie's containerd 1.7.24 instead (NRI 0.6.1, no sync
// block: envhook also takes PostCreateContainer there); printed only, RESULTS.md keeps 2.1.9's.
const VERSION = process.env.BENCH_CRI_NRI_CONTAINERD === '1.7' ? '1.7' : '2.1';
const skip = missingForCri(VERSION) ?? (fs.existsSync(path.join(REPO, 'dist/envhook.cjs')) ? undefined : 'dist/envhook.cjs not built');
if (skip) {
  console.error(`row 10: skipped, ${skip}`);
  process.exit(0);
}
const c = prepareCriContainerd({ version: VERSION, nri: true, tmpBase: process.env.BENCH_BUNDLE_DIR ?? '/dev/shm' });
await c.start();
const kubeletRoot = path.join(c.dir, 'kubelet');
const config = path.join(c.dir, 'envhook-bench.json');
// The plugin's owners records in the temporary directory, not the host's /run/envhook.
fs.writeFileSync(config, JSON.stringify({ runDir: path.join(c.dir, 'run') }) + '\n');
const containerdLog = () => fs.readFileSync(c.paths.log, 'utf8');
const go = goPlugin();
if (go.skipped) console.error(`row 10: ${go.skipped}; timing without it`);
const goEnvFile = path.join(c.dir, 'go-plugin.env');
fs.writeFileSync(goEnvFile, envFileText({ count: 50, prefix: 'GO_' }));
const envhookSide = (bundle) => ({
  name: '50-envhook',
  cmd: NODE,
  args: [
    bundle,
    'nri',
    '--socket',
    c.paths.nriSocket,
    '--kubelet-root',
    kubeletRoot,
    ...(process.env.BENCH_NRI_LOG ? ['--log-file', process.env.BENCH_NRI_LOG, '--log-level', 'debug'] : []),
  ],
});
const PLUGINS = {
  envhook: envhookSide(path.join(REPO, 'dist/envhook.cjs')),
  before: BEFORE && envhookSide(BEFORE),
  go: go.bin && { name: '50-gobench', cmd: go.bin, args: ['-socket', c.paths.nriSocket] },
};
/** The sides whose variable a container started under `side` has (both envhook builds set envhook's). */
const gives = (side, who) => side === who || (side === 'before' && who === 'envhook');
let plugin;
async function pluginOn(side) {
  const { name, cmd, args } = PLUGINS[side];
  const from = containerdLog().length;
  plugin = { name, proc: spawn(cmd, args, { env: { ...benchEnv, NODE_EXTRA_CA_CERTS: '', ENVHOOK_CONFIG: config }, stdio: 'ignore' }) };
  await until(
    () => new RegExp(`plugin \\\\"${name}\\\\" connected and synchronized`).test(containerdLog().slice(from)),
    `${name} connected`,
  );
}
async function pluginOff() {
  const { name, proc } = plugin;
  plugin = undefined;
  const from = containerdLog().length;
  proc.kill('SIGTERM');
  await new Promise((r) => proc.once('exit', r));
  await until(() => containerdLog().slice(from).includes(name), 'containerd saw the plugin go', 10_000).catch(() => undefined);
}

const load0 = loadavg();
const typical = typicalPod();
const { 'envhook.io/serviceLinks': _links, ...annotations } = typical.annotations;
const cases = [
  {
    name: 'typical annotated (no service-link switch)',
    pod: { ...typical, annotations: { ...annotations, 'bench.envhook.io/envfile': goEnvFile } },
    container: { name: 'app', command: ['sleep', '3600'], env: SERVICES, volumeMounts: { certs: '/etc/certs' } },
    check: { envhook: 'FROM_FILE_0', go: 'GO_00000' },
  },
  { name: 'unannotated pod', pod: {}, container: { name: 'app', command: ['sleep', '3600'], env: SERVICES } },
];
const out = [];
try {
  for (const k of cases) {
    const pod = await runPod(c, kubeletRoot, { name: `bench-nri-${out.length}`, handler: '', ...k.pod });
    const times = { envhook: [], none: [], go: [], before: [] };
    const per = Math.ceil(RUNS / 3) + 1; // the first start of each block is a warm-up
    for (const side of BLOCKS) {
      if (side !== 'none' && !PLUGINS[side]) continue;
      if (side !== 'none') await pluginOn(side);
      for (let i = 0; i < per; i++) {
        const t0 = performance.now();
        const id = await pod.create(k.container);
        await pod.start(id);
        const ms = performance.now() - t0;
        // Each plugin's variable is there with it and only with it.
        if (i === 0 && k.check) {
          for (const [who, name] of Object.entries(k.check)) {
            const r = await pod.execSync(id, ['sh', '-c', `env | grep -q '^${name}='`]);
            if ((r.exitCode === 0) !== gives(side, who))
              throw new Error(`row 10: ${k.name}: ${name} ${gives(side, who) ? 'missing with' : 'present with'} ${side}`);
          }
        }
        if (i > 0) times[side].push(ms);
        await removeContainer(c.cri, id);
      }
      if (side !== 'none') await pluginOff();
    }
    await pod.remove();
    out.push({
      name: k.name,
      envhook: median(times.envhook),
      none: median(times.none),
      go: times.go.length ? median(times.go) : undefined,
      before: times.before.length ? median(times.before) : undefined,
      n: times.envhook.length,
    });
  }
} finally {
  if (plugin) await pluginOff();
  const left = await c.stop();
  if (left.processes.length || left.mounts.length) console.error(`row 10: containerd left ${JSON.stringify(left)}`);
}
const f = (x) => x.toFixed(1);
const d = (x) => `${x >= 0 ? '+' : ''}${f(x)}`;
const goCols = (r) => (r.go === undefined ? '– | – | –' : `${f(r.go)} | ${d(r.go - r.none)} | ${d(r.envhook - r.go)}`);
const section = `${START}
## CRI with NRI (row 10): CreateContainer+StartContainer on ${c.label.replace(/^containerd \S+ /, 'containerd ').split(' (')[0]}, \`envhook nri\` registered against no plugin and a Go plugin

Measured by \`node bench/cri-nri.mjs\` on ${new Date().toISOString().replace(/\.\d+Z$/, 'Z')} (load average ${load0} at start, ${loadavg()} at end) on one
private ${c.label} with CRI and NRI on, pods with no runtimeClassName; one
plugin at a time connected in blocks and stopped between them (${BLOCKS.join(' ')}), the first
start of each block left out; median wall time of the two CRI calls as the kubelet makes them.
"envhook" is \`dist/envhook.cjs\` on Node ${process.version}; "Go" is bench/go-plugin/main.go on NRI's
own Go stub (Debian sid), reading one env file of 50 variables for the annotated pod and
nothing for the other${go.skipped ? ` (not run: ${go.skipped})` : ''}. Without a plugin the annotated container starts without its
env (NRI fails open). Target: envhook at most +3 ms over no plugin.

| case | starts each | no plugin ms | envhook ms | envhook Δ | ≤ +3 ms | Go plugin ms | Go Δ | envhook − Go |
|---|---|---|---|---|---|---|---|---|
${out.map((r) => `| ${r.name} | ${r.n} | ${f(r.none)} | ${f(r.envhook)} | ${d(r.envhook - r.none)} | ${r.envhook - r.none <= 3 ? 'met' : 'NOT met'} | ${goCols(r)} |`).join('\n')}
${
  BEFORE
    ? `\nBefore and after (\`BENCH_BEFORE\`): the earlier build ${BEFORE} in the same blocks.\n\n| case | before ms | before Δ | envhook − before |\n|---|---|---|---|\n${out
        .map((r) => `| ${r.name} | ${f(r.before)} | ${d(r.before - r.none)} | ${d(r.envhook - r.before)} |`)
        .join('\n')}\n`
    : ''
}${END}`;
console.log(section);
if (VERSION === '2.1') replaceMarkedSection(START, END, section);
