// The soak's node (bench/soak.mjs): a private containerd 2.1.9 with NRI on (tmpfs, as
// /run/containerd is), and `envhook nri` started as examples/nri-daemonset.yaml runs it: a separate
// process dialling the NRI socket, `--socket`, `--kubelet-root`, `--metrics-address`, the run
// directory the DaemonSet mounts at /run/envhook (here a private one), logs as JSON lines on stderr
// (what `kubectl logs` shows), and the variables the kubelet gives every container
// (KUBERNETES_SERVICE_HOST: envhook counts itself a DaemonSet). One flag more than the example:
// `--cri-socket`, so that the missed containers of pods that ask for it are evicted (the example
// does not mount the CRI socket and does not evict). What the soak reads of it every minute: open
// fds, inotify watches (/proc/<pid>/fdinfo), VmRSS / RssAnon (status) and Pss (smaps_rollup) of
// the supervisor and the worker, the status file, and the run directory's copies and records.
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { benchEnv } from './harness.mjs';
import { NODE, REPO } from './cli.mjs';
import { prepareCriContainerd } from '../test/helpers/cri/containerd.ts';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** The daemon as the image runs it (the single executable), or the bundle on Node when it is not built. */
function envhookArgv() {
  const sea = path.join(REPO, 'dist/envhook');
  const mtime = (f) => fs.statSync(f, { throwIfNoEntry: false })?.mtimeMs ?? 0;
  if (mtime(sea) >= mtime(path.join(REPO, 'dist/envhook-main.cjs')) && mtime(sea) > 0)
    return { argv: [sea], what: 'the single executable dist/envhook' };
  return { argv: [NODE, path.join(REPO, 'dist/envhook.cjs')], what: 'the bundle dist/envhook.cjs on Node (dist/envhook not built)' };
}

/** A free TCP port on the loopback address, for the metrics endpoint. */
async function freePort() {
  const srv = net.createServer();
  await new Promise((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address();
  await new Promise((r) => srv.close(r));
  return port;
}

/** containerd started with NRI on; the kubelet root and envhook's run directory under its directory. */
export async function startContainerd() {
  const c = prepareCriContainerd({ version: '2.1', nri: true, tmpBase: process.env.BENCH_BUNDLE_DIR ?? '/dev/shm' });
  await c.start();
  const kubeletRoot = path.join(c.dir, 'kubelet');
  const runDir = path.join(c.dir, 'run');
  fs.mkdirSync(path.join(kubeletRoot, 'pods'), { recursive: true });
  // The DaemonSet's hostPath /run/envhook, type DirectoryOrCreate: 0755, root's.
  fs.mkdirSync(runDir, { mode: 0o755 });
  return { c, kubeletRoot, runDir };
}

/**
 * `envhook nri` as the DaemonSet runs it; `onLine` gets each line of its stderr (JSON lines) as it
 * comes: the soak keeps none of them, so a day's log costs no memory.
 */
export async function startEnvhook({ c, kubeletRoot, runDir }, onLine) {
  const { argv, what } = envhookArgv();
  // SOAK_ENVHOOK_LOG=FILE: envhook's stderr also to FILE (to find out why a check failed; it grows with the run)
  const copy = process.env.SOAK_ENVHOOK_LOG ? fs.openSync(process.env.SOAK_ENVHOOK_LOG, 'a') : undefined;
  const port = await freePort();
  const config = path.join(c.dir, 'envhook-empty-config.json');
  fs.writeFileSync(config, '{}\n');
  const args = [
    'nri',
    '--socket',
    c.paths.nriSocket,
    '--kubelet-root',
    kubeletRoot,
    '--metrics-address',
    `[127.0.0.1]:${port}`, // the DaemonSet's [$(HOST_IP)]:9901, on a free port
    '--cri-socket',
    c.paths.address,
    ...(process.env.SOAK_LOG_LEVEL ? ['--log-level', process.env.SOAK_LOG_LEVEL] : []),
  ];
  const env = {
    PATH: benchEnv.PATH,
    HOST_IP: '127.0.0.1',
    KUBERNETES_SERVICE_HOST: '10.96.0.1',
    KUBERNETES_SERVICE_PORT: '443',
    ENVHOOK_RUN_DIR: runDir,
    ENVHOOK_CONFIG: config,
    // SOAK_NODE_OPTIONS: Node options for envhook's processes (e.g. `--cpu-prof --cpu-prof-dir=DIR`: a
    // profile of each process that ends by itself, the last worker's at the end of the run)
    ...(process.env.SOAK_NODE_OPTIONS ? { NODE_OPTIONS: process.env.SOAK_NODE_OPTIONS } : {}),
  };
  const child = spawn(argv[0], [...argv.slice(1), ...args], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  let rest = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (d) => {
    const lines = (rest + d).split('\n');
    rest = lines.pop();
    if (rest.length > 1 << 20) rest = ''; // a line without an end: dropped, not kept
    for (const l of lines) onLine(l);
    if (copy !== undefined) fs.writeSync(copy, lines.map((l) => `${l}\n`).join(''));
  });
  const exited = new Promise((r) => child.once('exit', (code, signal) => r(code ?? signal)));
  const statusFile = path.join(runDir, 'nri-status.json');
  const status = () => {
    try {
      return JSON.parse(fs.readFileSync(statusFile, 'utf8'));
    } catch {
      return undefined;
    }
  };
  const end = Date.now() + 120_000;
  while (!status()?.connected || !status()?.workerPid) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`soak: envhook nri exited (${child.exitCode ?? child.signalCode}) before registering`);
    if (Date.now() > end) throw new Error('soak: envhook nri not registered within 120 s');
    await sleep(100);
  }
  return {
    child,
    what,
    argv: [...argv.map((a) => path.relative(REPO, a) || a), ...args.map((a) => a.replace(c.dir, '$DIR'))].join(' '),
    status,
    port,
    exited,
    /** SIGTERM, then SIGKILL after 10 s; resolves with how it ended. */
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      const how = await exited;
      clearTimeout(timer);
      return how;
    },
  };
}

const kib = (text, field) => Number(text.match(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm'))?.[1] ?? NaN);

/** A process's fds, inotify watches and memory (MiB), or undefined when it is gone. */
export function procSample(pid) {
  if (!pid) return undefined;
  try {
    const fdDir = `/proc/${pid}/fd`;
    const fds = fs.readdirSync(fdDir);
    let watches = 0;
    for (const fd of fds) {
      let target;
      try {
        target = fs.readlinkSync(`${fdDir}/${fd}`);
      } catch {
        continue;
      }
      if (target !== 'anon_inode:inotify') continue;
      watches += fs
        .readFileSync(`/proc/${pid}/fdinfo/${fd}`, 'utf8')
        .split('\n')
        .filter((l) => l.startsWith('inotify wd:')).length;
    }
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const rollup = fs.readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
    return {
      fds: fds.length,
      watches,
      rss: kib(status, 'VmRSS') / 1024,
      anon: kib(status, 'RssAnon') / 1024,
      pss: kib(rollup, 'Pss') / 1024,
    };
  } catch {
    return undefined;
  }
}

/**
 * The run directory: owned copies (`volumes/<pod uid>/<volume>`: how many, every directory in
 * them, KiB on the tmpfs) and records (every file outside `volumes/` but the status file).
 */
export function runDirSurvey(runDir) {
  const out = { copies: 0, copyDirs: 0, copyKiB: 0, records: 0, copyPods: new Set(), recordNames: [] };
  const walk = (dir, visit) => {
    let entries;
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const p = path.join(dir, e.name);
      visit(p, e);
      if (e.isDirectory()) walk(p, visit);
    }
  };
  const volumes = path.join(runDir, 'volumes');
  for (const uid of safeReaddir(volumes)) {
    out.copyPods.add(uid);
    for (const vol of safeReaddir(path.join(volumes, uid))) {
      out.copies++;
      walk(path.join(volumes, uid, vol), (p, e) => {
        if (e.isDirectory()) out.copyDirs++;
        try {
          out.copyKiB += (fs.lstatSync(p).blocks * 512) / 1024;
        } catch {
          // removed while walked
        }
      });
    }
  }
  for (const e of safeReaddir(runDir)) {
    if (e === 'volumes' || e === 'nri-status.json') continue;
    const p = path.join(runDir, e);
    if (fs.lstatSync(p, { throwIfNoEntry: false })?.isDirectory()) {
      walk(p, (q, d) => {
        if (!d.isDirectory()) {
          out.records++;
          if (out.recordNames.length < 1000) out.recordNames.push(path.relative(runDir, q));
        }
      });
    } else {
      out.records++;
      out.recordNames.push(e);
    }
  }
  return out;
}

function safeReaddir(dir) {
  try {
    return fs.readdirSync(dir);
  } catch {
    return [];
  }
}

/**
 * CLOCK_BOOTTIME in seconds, the clock of /proc/uptime (what the reader in the container reads):
 * Node's monotonic clock plus the offset taken at one of /proc/uptime's centisecond ticks.
 */
export function bootClock() {
  const mono = () => Number(process.hrtime.bigint()) / 1e9;
  const up = () => Number(fs.readFileSync('/proc/uptime', 'utf8').split(' ')[0]);
  const u0 = up();
  let offset;
  for (const end = mono() + 1; offset === undefined && mono() < end;) {
    const u = up();
    if (u !== u0) offset = u - mono();
  }
  offset ??= up() - mono();
  return { now: () => mono() + offset };
}
