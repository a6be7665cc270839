// Row 13: the pre-installed plugin's start, from containerd starting the plugin file to
// containerd's line for its registration, which NRI must see within its registration timeout
// (5 s by default: containerd 1.7 fails its CRI service when it passes). On private containerds
// 1.7.24 (Debian trixie) and 2.1.9 (Debian sid) with NRI on, quiet and with both CPUs busy
// (scripts/cpu-burners.ts). Both ends are containerd's own stamps: NRI's `starting … plugin`
// line, logged just before it runs the file, and `plugin "50-envhook" registered as …`, logged
// when RegisterPlugin arrives (the log is polled, the figure is containerd's clock). Subjects,
// each the file as `envhook install --mode nri` writes it (the installed single executable),
// plus the settings file: "installed", this build's file; "Node hand-over", the same file
// ending in `exec envhook nri` (the hand-over done by a Node process: the file before this
// bench's row changed it, and what an admin's own plugin file that runs `envhook nri` gets);
// Baseline in the same run, between the starts and under the same load: `node -e 0`, spawn to
// exit. Phases from envhook's log (debug, pino's clock): the supervisor started (`nri: start`),
// the worker loaded (`nri: worker start`). Run as root after npm run build:
// node bench/nri-preinstalled.mjs; BENCH_PRESTART_RUNS starts per subject and load (default 10).
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { alive, benchEnv, loadavg, median, until } from './harness.mjs';
import { NODE, REPO } from './cli.mjs';
import { containerdTime, nriBenchContainerd } from './nri-containerd.mjs';
import { replaceMarkedSection } from './sections.mjs';
import { startBurners } from '../scripts/cpu-burners.ts';
import { missingForCri } from '../test/helpers/cri/containerd.ts';
import { install, nriInstallArgs, realSource, withSettingsFile } from '../test/helpers/install/install.ts';

const RUNS = Number(process.env.BENCH_PRESTART_RUNS) || 10;
const START = '<!-- row 13: NRI pre-installed start -->';
const END = '<!-- end of row 13 -->';
/** NRI's line just before it runs the plugin file `50-name`, and its line for the registration. */
const starting = (name) => new RegExp(`starting (?:pre-installed NRI )?plugin \\\\"(?:50-)?${name}\\\\"`);
const registered = (name) => new RegExp(`registered as \\\\"50-${name}\\\\"`);

if (!fs.existsSync(path.join(REPO, 'dist/envhook'))) {
  console.error('row 13: skipped, dist/envhook not built (npm run build)');
  process.exit(0);
}

/** The installed file's last line, `exec BIN nri --socket S`, whatever the file does before it. */
function nodeHandOver(installed) {
  const bin = installed.match(/^bin=(.+)$/m)?.[1] ?? installed.match(/^exec (\S+) nri /m)?.[1];
  const socket = installed.match(/ nri --socket (\S+)/)?.[1];
  if (!bin || !socket) throw new Error('row 13: the installed plugin file names no executable or socket');
  const head = installed.split('\n').filter((l) => /^(#|NODE_OPTIONS=|export |log=|if \(: )/.test(l));
  return [...head, `exec ${bin} nri --socket ${socket}`, ''].join('\n');
}

/** One containerd with the plugin installed; `run(subject)` restarts it and times one start. */
async function setUp(version) {
  const { c, ctrdLog, ehLog, config, statusFile, status } = await nriBenchContainerd(version);
  const prefix = path.join(c.dir, 'envhook');
  const extra = nriInstallArgs({
    config: c.paths.config,
    prefix,
    containerd: c.bin.containerd,
    nriLog: path.join(c.dir, 'nri-plugin.log'),
  });
  const r = install({ runtime: 'containerd', root: '/', source: realSource(), extra });
  if (r.status !== 0) throw new Error(`row 13: envhook install failed: ${r.stderr}`);
  const pluginFile = path.join(c.paths.nriPlugins, '50-envhook');
  const installed = fs.readFileSync(pluginFile, 'utf8');
  fs.rmSync(pluginFile);
  const supervisorPid = () => status()?.pid;
  const pinoTime = (msg, from) => {
    ehLog.read();
    const line = ehLog.lines.slice(from).find((l) => l.includes(`"msg":"${msg}"`));
    return line ? JSON.parse(line).time : NaN;
  };
  return {
    label: c.label,
    subjects: [
      { name: 'installed', wrapper: withSettingsFile(installed, config) },
      // Before the plugin file did the hand-over itself, both were the same file.
      {
        name: nodeHandOver(installed) === installed ? 'Node hand-over (= installed)' : 'Node hand-over',
        wrapper: withSettingsFile(nodeHandOver(installed), config),
      },
    ],
    async run(s) {
      fs.rmSync(statusFile, { force: true });
      fs.writeFileSync(pluginFile, s.wrapper, { mode: 0o755 });
      const from = ctrdLog.mark();
      const ehFrom = ehLog.mark();
      await c.restart();
      const started = await ctrdLog.wait(starting('envhook'), from, 60_000, `${s.name}: containerd starting the plugin`);
      const { line } = await ctrdLog.wait(registered('envhook'), started.i, 60_000, `${s.name} registered`);
      const t0 = containerdTime(started.line);
      const out = {
        total: containerdTime(line) - t0,
        supervisor: pinoTime('nri: start', ehFrom) - t0,
        worker: pinoTime('nri: worker start', ehFrom) - t0,
      };
      // The next start must not find this one's supervisor (a takeover would add its own time).
      await until(() => supervisorPid() !== undefined, `row 13: ${s.name}: status file written`);
      const sup = supervisorPid();
      fs.rmSync(pluginFile);
      await c.halt();
      await until(() => !alive(sup), `row 13: ${s.name}: the supervisor ended with containerd`);
      return out;
    },
    nriLines: () => (ctrdLog.read(), ctrdLog.lines.filter((l) => /nri|plugin \\"/i.test(l)).slice(-30)),
    async close() {
      const left = await c.stop();
      if (left.processes.length || left.mounts.length) console.error(`row 13: containerd left ${JSON.stringify(left)}`);
    },
  };
}

const pct = (xs, p) => {
  const s = xs.filter((x) => !Number.isNaN(x)).sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)];
};
const f0 = (x) => (x === undefined || Number.isNaN(x) ? '–' : x.toFixed(0));

/** `node -e 0`, spawn to exit, in ms. */
function nodeStart() {
  const t0 = process.hrtime.bigint();
  spawnSync(NODE, ['-e', '0'], { env: benchEnv, stdio: 'ignore' });
  return Number(process.hrtime.bigint() - t0) / 1e6;
}

/** RUNS starts of each subject, interleaved, each after a `node -e 0`; the table's rows for this version and load. */
async function block(h, load) {
  const res = Object.fromEntries(h.subjects.map((s) => [s.name, []]));
  const base = [];
  const stopBurners = load === 'busy' ? startBurners() : () => undefined;
  const loadAt = loadavg();
  try {
    for (let i = 0; i < RUNS; i++) {
      for (let k = 0; k < h.subjects.length; k++) {
        const s = h.subjects[(i + k) % h.subjects.length];
        base.push(nodeStart());
        const x = await h.run(s);
        res[s.name].push(x);
        console.error(
          `  ${h.label} ${load} ${s.name}: ${x.total.toFixed(0)} ms (supervisor ${f0(x.supervisor)}, worker ${f0(x.worker)}); node -e 0 ${base.at(-1).toFixed(0)}`,
        );
      }
    }
  } finally {
    stopBurners();
  }
  const nodeP50 = median(base);
  return h.subjects.map((s) => {
    const xs = res[s.name];
    const tot = xs.map((x) => x.total);
    const ph = (k) => f0(median(xs.map((x) => x[k]).filter((v) => !Number.isNaN(v))));
    return `| ${h.label.match(/\d+\.\d+\.\d+/)?.[0] ?? h.label} | ${load} (load ${loadAt}) | ${s.name} | ${xs.length} | ${f0(pct(tot, 50))} | ${f0(Math.max(...tot))} | ${ph('supervisor')} / ${ph('worker')} | ${nodeP50.toFixed(0)} | ${(pct(tot, 50) / nodeP50).toFixed(1)}× | ${tot.filter((t) => t > 5000).length} |`;
  });
}

const rows = [];
const load0 = loadavg();
for (const version of ['1.7', '2.1']) {
  const skip = missingForCri(version);
  if (skip) {
    console.error(`row 13: containerd ${version} skipped, ${skip}`);
    continue;
  }
  const h = await setUp(version);
  try {
    for (const load of ['quiet', 'busy']) rows.push(...(await block(h, load)));
  } catch (err) {
    console.error(`containerd ${version}'s log, its NRI lines:\n${h.nriLines().join('\n')}`);
    throw err;
  } finally {
    await h.close();
  }
}

const section = `${START}
## NRI pre-installed start (row 13): containerd starting the plugin file to its registration

Measured by \`node bench/nri-preinstalled.mjs\` on ${new Date().toISOString().replace(/\.\d+Z$/, 'Z')} (load average ${load0} at start, ${loadavg()} at end; 2 CPUs
shared with other sessions), private containerds from Debian with NRI on and no containers, each
restarted once per start. From the time containerd stamps on NRI's \`starting … plugin\` line
(just before it runs the file) to the one it stamps on \`plugin "50-envhook" registered as …\`: what
NRI's registration timeout (5 s by default) is measured against. "installed" is the plugin file
\`envhook install --mode nri\` writes (the single executable it installs) with the settings file
added; "Node hand-over" the same file ending in \`exec envhook nri\`, where a Node process does the
hand-over. "busy": one spinning shell per CPU (scripts/cpu-burners.ts). Baseline between the starts,
under the same load: \`node -e 0\` on Node ${process.version}, spawn to exit (its p50 here). Phases from envhook's
log (pino's clock, from containerd's first stamp): the supervisor started, the worker loaded.

| containerd | load | plugin file | starts | p50 ms | max ms | phases p50 ms: supervisor / worker | node -e 0 p50 ms | p50 ÷ node -e 0 | over 5 s |
|---|---|---|---|---|---|---|---|---|---|
${rows.join('\n')}
${END}`;
console.log(section);
replaceMarkedSection(START, END, section);
