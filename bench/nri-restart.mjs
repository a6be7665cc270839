// Row 11: restart-to-registered after `kill -9` of `envhook nri`'s worker, on one
// private containerd 2.1.9 (Debian sid) with NRI on. From the kill (wall clock, just before
// kill(2)) to the time containerd stamps on its log line for the new registration
// (`plugin "50-envhook" connected and synchronized`: after RegisterPlugin, Configure and
// Synchronize), so polling the log costs nothing in the figure. Four subjects, one at a time in
// blocks: envhook started as an external plugin (a DaemonSet, a systemd unit) and as a
// pre-installed one (containerd starts it from plugin_path; its later workers dial the socket as
// external plugins), each as the single executable (`envhook install`'s copy) and as the bundle
// on Node. Baselines in the same run, taken between the kills: a bare `node -e 0` (spawn to exit)
// and the Go plugin on NRI's own stub (bench/go-plugin), spawn to the same containerd log line.
// Phases from envhook's own log (debug): the supervisor sees the worker's exit; the worker has
// loaded its modules; the worker has registered. Run: node bench/nri-restart.mjs (as root, after
// npm run build); BENCH_RESTART_KILLS (per subject, default 50). Writes its own section.
import fs from 'node:fs';
import path from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { alive, benchEnv, loadavg, median, until } from './harness.mjs';
import { NODE, REPO } from './cli.mjs';
import { goPlugin } from './go-plugin.mjs';
import { missingForCri } from '../test/helpers/cri/containerd.ts';
import { install, nriInstallArgs, realSource, withSettingsFile } from '../test/helpers/install/install.ts';
import { atomicWrite } from '../src/fs/atomic-write.ts';
import { replaceMarkedSection } from './sections.mjs';
import { containerdTime, nriBenchContainerd } from './nri-containerd.mjs';

const KILLS = Number(process.env.BENCH_RESTART_KILLS) || 50;
const BLOCK = 10;
const SURVIVE_MS = 2000;
const START = '<!-- row 11: NRI restart -->';
const END = '<!-- end of row 11 -->';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const skip =
  missingForCri('2.1') ?? (fs.existsSync(path.join(REPO, 'dist/envhook')) ? undefined : 'dist/envhook not built (npm run build)');
if (skip) {
  console.error(`row 11: skipped, ${skip}`);
  process.exit(0);
}

const { c, ctrdLog, ehLog, config, statusFile, status } = await nriBenchContainerd('2.1');
const S = c.paths.nriSocket;
const env = { ...benchEnv, ENVHOOK_CONFIG: config };
delete env.NODE_OPTIONS;

// The single executable as `envhook install --mode nri` puts it, and its plugin wrapper; the
// wrapper gets one line more, as an admin would add it: the settings file (private socket,
// run directory, log), since a pre-installed plugin's environment is NRI's three variables.
const prefix = path.join(c.dir, 'envhook');
const r = install({
  runtime: 'containerd',
  root: '/',
  source: realSource(),
  extra: nriInstallArgs({ config: c.paths.config, prefix, containerd: c.bin.containerd, nriLog: path.join(c.dir, 'nri-plugin.log') }),
});
if (r.status !== 0) throw new Error(`row 11: envhook install failed: ${r.stderr}`);
const pluginFile = path.join(c.paths.nriPlugins, '50-envhook');
const installed = fs.readFileSync(pluginFile, 'utf8');
fs.rmSync(pluginFile);
const exec = installed.match(/^exec (.+) nri --socket .*$/m);
if (!exec) throw new Error('row 11: the installed plugin wrapper has no `exec … nri` line');
const withConfig = (text) => withSettingsFile(text, config);
const seaBin = path.join(c.dir, 'envhook-sea');
atomicWrite(seaBin, fs.readFileSync(exec[1].replace(/^'|'$/g, '')), { newFileMode: 0o755 });
const bundle = [NODE, path.join(REPO, 'dist/envhook.cjs')];
const SUBJECTS = [
  { name: 'external, SEA', argv: [seaBin, 'nri'] },
  { name: 'external, bundle', argv: [...bundle, 'nri'] },
  { name: 'pre-installed, SEA', wrapper: withConfig(installed) },
  {
    name: 'pre-installed, bundle',
    wrapper: withConfig(installed).replace(
      /^exec .+ nri (--socket .*)$/m,
      (_, socket) => `exec ${bundle.map((a) => JSON.stringify(a)).join(' ')} nri ${socket}`,
    ),
  },
];

const REGISTERED = /plugin \\"50-envhook\\" connected and synchronized/;
// Registered at containerd's start: pre-installed, or, when the hand-off (three Node starts on a
// loaded machine) missed containerd's 5 s registration timeout, as an external plugin right after.
const PRE_REGISTERED =
  /pre-installed NRI plugin \\"50-envhook\\" synchronization success|plugin \\"50-envhook\\" connected and synchronized/;
let running;

async function startSubject(s) {
  const from = ctrdLog.mark();
  fs.rmSync(statusFile, { force: true });
  if (s.wrapper) {
    fs.writeFileSync(pluginFile, s.wrapper, { mode: 0o755 });
    await c.restart();
    await ctrdLog.wait(PRE_REGISTERED, from, 60_000, `${s.name} registered`);
    running = { s };
  } else {
    const proc = spawn(s.argv[0], s.argv.slice(1), { env, stdio: 'ignore' });
    running = { s, proc, exited: new Promise((res) => proc.once('exit', res)) };
    await ctrdLog.wait(REGISTERED, from, 60_000, `${s.name} registered`);
  }
  await until(() => status()?.connected && status()?.workerPid, `row 11: ${s.name}: status connected`);
}

async function stopSubject() {
  const { s, proc, exited } = running;
  const sup = status()?.pid;
  if (s.wrapper) {
    // containerd stopped: the pre-installed plugin's supervisor ends with its worker (docs/nri.md).
    fs.rmSync(pluginFile);
    await c.halt();
    await until(() => !alive(sup), `row 11: ${s.name}: the supervisor ended with containerd`, 15_000);
    await c.restart();
  } else {
    proc.kill('SIGTERM');
    await exited;
  }
  running = undefined;
}

/** The baselines, between kills: bare Node's start and exit; the Go stub's spawn to registered. */
const go = goPlugin();
if (go.skipped) console.error(`row 11: ${go.skipped}; timing without it`);
const GO_REGISTERED = /plugin \\"50-gobench\\" connected and synchronized/;
const base = { node: [], go: [] };
async function baselines() {
  const t0 = process.hrtime.bigint();
  spawnSync(NODE, ['-e', '0'], { env: benchEnv, stdio: 'ignore' });
  base.node.push(Number(process.hrtime.bigint() - t0) / 1e6);
  if (!go.bin) return;
  const from = ctrdLog.mark();
  const at = Date.now();
  const p = spawn(go.bin, ['-socket', S], { stdio: 'ignore' });
  const { line } = await ctrdLog.wait(GO_REGISTERED, from, 30_000, 'the Go plugin registered');
  base.go.push(containerdTime(line) - at);
  const gone = new Promise((res) => p.once('exit', res));
  p.kill('SIGTERM');
  await gone;
}

const pinoTime = (re, from) => {
  for (let i = from; i < ehLog.lines.length; i++) if (re.test(ehLog.lines[i])) return JSON.parse(ehLog.lines[i]).time;
  return NaN;
};

/** One kill: the worker SIGKILLed, then the times of the way back. */
async function killOnce(name) {
  const st = status();
  await sleep(200 + Math.random() * 300);
  await baselines();
  const from = ctrdLog.mark();
  const ehFrom = ehLog.mark();
  const regs = st.counts.registrations;
  const t0 = Date.now();
  process.kill(st.workerPid, 'SIGKILL');
  const { line } = await ctrdLog.wait(REGISTERED, from, 30_000, `${name} registered again`);
  const total = containerdTime(line) - t0;
  // NRI SIGKILLs the process it started for a pre-installed plugin once it finds that plugin's
  // connection closed (adaptation's removeClosedPlugins → plugin.stop, in a goroutine, at the
  // next registration or request): whether the supervisor is still there SURVIVE_MS later.
  await sleep(SURVIVE_MS);
  const survived =
    alive(st.pid) && status()?.connected === true && status().workerPid !== st.workerPid && status().counts.registrations === regs + 1;
  ctrdLog.read();
  ehLog.read();
  // Never two registrations at once: exactly one for this kill.
  const dup = ctrdLog.lines.slice(from).filter((l) => REGISTERED.test(l)).length;
  if (dup !== 1) throw new Error(`row 11: ${name}: ${dup} registrations after one kill`);
  return {
    total,
    seen: pinoTime(/"msg":"nri: worker exited: starting another"/, ehFrom) - t0,
    loaded: pinoTime(/"msg":"nri: worker start"/, ehFrom) - t0,
    registered: pinoTime(/"msg":"nri: registered"/, ehFrom) - t0,
    survived,
  };
}

const load0 = loadavg();
const results = Object.fromEntries(SUBJECTS.map((s) => [s.name, []]));
try {
  for (let done = 0; done < KILLS; done += BLOCK) {
    for (const s of SUBJECTS) {
      for (let k = 0; k < Math.min(BLOCK, KILLS - done); k++) {
        // A pre-installed plugin does not outlive its first replacement (above): one kill per containerd start.
        // (an external one whose worker is gone would be a fault of envhook's: it is started anew, and counted below)
        if (k > 0 && !s.wrapper && !alive(status()?.workerPid)) await stopSubject();
        if (k === 0 || s.wrapper || !running) await startSubject(s);
        const x = await killOnce(s.name);
        results[s.name].push(x);
        console.error(
          `  ${s.name}: ${x.total.toFixed(1)} ms${x.survived ? '' : ' (gone 2 s later)'} (seen ${x.seen}, loaded ${x.loaded}, registered ${x.registered}); node -e 0 ${base.node.at(-1).toFixed(1)}, Go ${base.go.at(-1)?.toFixed(1)}`,
        );
      }
      await stopSubject();
    }
  }
} catch (err) {
  ctrdLog.read();
  ehLog.read();
  console.error(`containerd:\n${ctrdLog.lines.slice(-25).join('\n')}\nenvhook:\n${ehLog.lines.slice(-25).join('\n')}`);
  throw err;
} finally {
  if (running) await stopSubject().catch(() => undefined);
  const left = await c.stop();
  if (left.processes.length || left.mounts.length) console.error(`row 11: containerd left ${JSON.stringify(left)}`);
}

const pct = (xs, p) => {
  const s = [...xs].filter((x) => !Number.isNaN(x)).sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)];
};
const f0 = (x) => (x === undefined || Number.isNaN(x) ? '–' : x.toFixed(0));
const goP50 = base.go.length ? median(base.go) : undefined;
const nodeP50 = median(base.node);
const rows = SUBJECTS.map((s) => {
  const xs = results[s.name];
  const tot = xs.map((x) => x.total);
  const p50 = pct(tot, 50);
  const p99 = pct(tot, 99);
  const ph = (k) => f0(median(xs.map((x) => x[k]).filter((v) => !Number.isNaN(v))));
  return `| ${s.name} | ${xs.length} | ${f0(p50)} | ${f0(p99)} | ${f0(Math.max(...tot))} | ${p99 <= 1000 ? 'met' : 'NOT met'} | ${ph('seen')} / ${ph('loaded')} / ${ph('registered')} | ${(p50 / nodeP50).toFixed(1)}× | ${goP50 ? `${(p50 / goP50).toFixed(1)}×` : '–'} | ${xs.filter((x) => x.survived).length} of ${xs.length} |`;
});
const section = `${START}
## NRI restart (row 11): \`kill -9\` of the worker to registered again, containerd 2.1.9

Measured by \`node bench/nri-restart.mjs\` on ${new Date().toISOString().replace(/\.\d+Z$/, 'Z')} (load average ${load0} at start, ${loadavg()} at end; 2 CPUs
shared with other sessions) on one private containerd 2.1.9 (Debian sid) with NRI on and no
containers. From just before kill(2) of the worker to the time containerd stamps on its line
\`plugin "50-envhook" connected and synchronized\` (the new worker dialled, registered,
configured and synchronized); the supervisor's pid never changes. Subjects in blocks of ${BLOCK}
kills, one at a time: "external" is \`envhook nri\` dialling the socket (a DaemonSet, a systemd
unit), "pre-installed" is the plugin \`envhook install --mode nri\` writes, started by containerd
(its later workers dial the socket as external plugins); "SEA" is the single executable as
install copies it, "bundle" \`dist/envhook.cjs\` on Node ${process.version}. Settings from a config file at
debug level (the phases below come from that log; pino's ms clock). Each kill checked: exactly
one registration in containerd's log, the status file connected with a new worker pid.
Baselines taken between the kills (${base.node.length} each): \`node -e 0\` spawn to exit, p50
${nodeP50.toFixed(1)} ms (p99 ${pct(base.node, 99).toFixed(1)}); the Go plugin on NRI's own stub
(bench/go-plugin) spawn to the same containerd line, p50 ${goP50 ? goP50.toFixed(1) : '–'} ms${base.go.length ? ` (p99 ${pct(base.go, 99).toFixed(1)})` : ` (${go.skipped})`}.
Target: p99 ≤ 1 s. p99 is the ⌈0.99·n⌉-th of n (the maximum for n ≤ 100).

| subject | kills | p50 ms | p99 ms | max ms | p99 ≤ 1 s | phases p50 ms: exit seen / worker loaded / registered (envhook's log) | p50 ÷ node -e 0 | p50 ÷ Go stub | still registered 2 s later |
|---|---|---|---|---|---|---|---|---|---|
${rows.join('\n')}
${END}`;
console.log(section);
replaceMarkedSection(START, END, section);
