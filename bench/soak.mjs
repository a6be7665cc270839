// The soak: a full node for as long as it is asked to run. A private containerd 2.1.9 with NRI
// (bench/soak-node.mjs), `envhook nri` started as the DaemonSet runs it, SOAK_PODS pods at once
// (bench/soak-pods.mjs: env file, env from a secret volume, an owned secret volume rewritten every
// SOAK_ROTATE_S, SOAK_READERS of them with a UID-1000 reader), one pod removed and created again
// every SOAK_CHURN_S, the worker SIGKILLed every SOAK_KILL_S, one containerd restart half-way;
// a row every minute (bench/soak-judge.ts) and a verdict it reaches by itself: every container
// got its env or was reported missed (and evicted where its pod asked), no reader failed, no
// upward trend after warm-up, owned copies exactly the live pods' at the end, nothing left once
// the pods are gone. It stops by itself after SOAK_MINUTES and cleans up after itself (pods,
// mounts, containerd, run directory), also at SIGINT/SIGTERM. Its own memory is bounded: one row
// a minute, counters, and records of the live pods only.
// Run: `npm run soak` (as root, after npm run build); bench/soak.md says what it measures.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { missingForCri } from '../test/helpers/cri/containerd.ts';
import { loadavg } from './harness.mjs';
import { REPO } from './cli.mjs';
import { LatencyHistogram, percentile, readerErrno, soakSettings } from './soak-judge.ts';
import { bootClock, procSample, runDirSurvey, startContainerd, startEnvhook } from './soak-node.mjs';
import { CANARY, createApp, createPod, OWNER, readerLines, recreateApp, removePod, rotate } from './soak-pods.mjs';
import { envhookLog } from './soak-log.ts';
import { judgeSoak, writeSoakReport } from './soak-report.mjs';

/** A container without its env must be reported missed (and evicted, where asked) within this. */
const REPORT_WITHIN_MS = 60_000;
/** The container's view of an owned file may lag the kubelet's swap by this much before it counts as stale. */
const STALE_AFTER_MS = 5_000;
/** How long the end state may take to be reached: envhook's minute pass (settle()) and some. */
const SETTLE_MS = 75_000;

let settings;
try {
  settings = soakSettings(process.env);
} catch (err) {
  console.error(err.message);
  process.exit(2);
}
const skip =
  (process.getuid?.() !== 0 ? 'run as root (containerd, mounts, chown)' : undefined) ??
  missingForCri('2.1') ??
  (fs.existsSync(path.join(REPO, 'dist/envhook.cjs')) ? undefined : 'dist/envhook.cjs not built (npm run build)');
if (skip) {
  console.error(`soak: cannot run: ${skip}`);
  process.exit(2);
}

// ---- stopping: by itself at the end, or at the first SIGINT/SIGTERM; a second one stops at once
const stop = { requested: false, by: undefined, wakers: new Set() };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const pause = (ms) =>
  new Promise((resolve) => {
    if (stop.requested) return resolve();
    const done = () => (clearTimeout(t), stop.wakers.delete(done), resolve());
    const t = setTimeout(done, Math.max(0, ms));
    stop.wakers.add(done);
  });
/** Stops the run: `by` a signal's name, or undefined for the soak's own error. */
const requestStop = (by) => {
  if (stop.requested) return;
  stop.requested = true;
  stop.by = by;
  for (const w of [...stop.wakers]) w();
};
let hardStop = async () => process.exit(130);
// A bug of the soak's own must not leave pods behind: it stops the run, and the clean-up follows.
process.on('unhandledRejection', (err) => {
  console.error(`soak: unhandled: ${err?.stack ?? err}`);
  requestStop();
});
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.on(sig, () => {
    if (stop.requested && stop.by === sig) return void hardStop();
    console.error(`soak: ${sig}: stopping, removing the pods and cleaning up (${sig} again: at once)`);
    requestStop(sig);
  });
}

const uptimeLine = () => execFileSync('uptime', { encoding: 'utf8' }).trim();
const say = (line) => console.error(`soak: ${line}`);
const S = settings;
const started = { at: new Date(), uptime: uptimeLine() };
say(
  `${S.pods} pods (${S.readers} with a reader), ${S.minutes} min, rotate ${S.rotateS} s, kill ${S.killS} s, churn ${S.churnS} s; ${started.uptime}`,
);

const node = await startContainerd();
const { c, kubeletRoot, runDir } = node;
const log = envhookLog(CANARY);
let eh;
hardStop = async () => {
  eh?.child.kill('SIGKILL');
  await c.stop().catch(() => {});
  process.exit(130);
};
const clock = bootClock();
const pods = [];
const tally = {
  created: 0,
  applied: 0,
  missedReported: 0,
  missedEvicted: 0,
  wrongEnv: 0,
  unreported: 0,
  notEvicted: 0,
  falseMissed: 0,
  createFailures: 0,
  createFailureReasons: new Map(),
  removeFailures: 0,
  kills: 0,
  restarts: [],
  rotations: 0,
  views: 0,
  staleViews: 0,
  notOwnedViews: 0,
  reads: 0,
  fail: { EACCES: 0, ENOENT: 0, other: 0 },
  seen: 0,
  lat: new LatencyHistogram(),
  minuteLat: [],
};
const rows = [];
let outcome;
try {
  eh = await startEnvhook(node, log.onLine);
  say(`envhook nri registered: ${eh.what}`);
  await createInitialPods();
  outcome = await soak();
} catch (err) {
  outcome = { error: err };
  say(`stopped by an error: ${err.stack ?? err}`);
} finally {
  outcome = { ...outcome, ...(await cleanUp()) };
}
const verdict = judgeSoak({ settings: S, rows, tally, log, outcome, started, ended: { at: new Date(), uptime: uptimeLine() }, daemon: eh });
writeSoakReport(verdict, { write: !stop.by && !outcome.error && S.minutes >= 15 });
process.exit(verdict.pass ? 0 : 1);

// ---------------------------------------------------------------------------------------------

/** The first SOAK_PODS pods, readers first, four at a time (a node's kubelet starts pods in parallel). */
async function createInitialPods() {
  let n = 0;
  const one = async () => {
    while (!stop.requested && n < S.pods) {
      const i = n++;
      await addPod(i, { reader: i < S.readers, evict: i % 2 === 1 });
    }
  };
  await Promise.all([one(), one(), one(), one()]);
  if (stop.requested) throw new Error('stopped while the pods were created');
  say(`${pods.length} pods up; ${uptimeLine()}`);
}

/** Creates pod `n`; its app container's env judged at once (applied), or later (missed). */
async function addPod(n, how) {
  const rec = await createPod(c, kubeletRoot, n, how);
  if (rec.app) onApp(rec);
  if (rec.failed) {
    tally.createFailures++;
    const reason = String(rec.failed.message ?? rec.failed)
      .split('\n')[0]
      .replace(/[0-9a-f]{64}/g, '<id>')
      .slice(0, 160);
    tally.createFailureReasons.set(reason, (tally.createFailureReasons.get(reason) ?? 0) + 1);
    await dropPod(rec);
    return undefined;
  }
  pods.push(rec);
  return rec;
}

function onApp(rec) {
  const app = rec.app;
  app.rec = rec;
  tally.created++;
  log.adopt(app);
  if (app.env === 'applied') rec.everApplied = true;
}

/** Final word on one app container (at its pod's removal, its re-creation, or the end). */
function judgeApp(app) {
  if (!app || app.judged) return;
  app.judged = true;
  log.apps.delete(app.id);
  if (app.env === 'applied') {
    tally.applied++;
    if (app.reported) tally.falseMissed++;
  } else if (app.env === 'absent' && app.reported) {
    tally.missedReported++;
    if (app.evicted) tally.missedEvicted++;
    else if (app.rec.evict) tally.notEvicted++;
  } else if (app.env === 'absent') tally.unreported++;
  else tally.wrongEnv++;
}

async function dropPod(rec) {
  rec.removing = true;
  judgeApp(rec.app);
  try {
    await removePod(rec);
  } catch (err) {
    tally.removeFailures++;
    say(`pod soak-${rec.n}: removal failed (${String(err.message).split('\n')[0]}); swept at the end`);
  }
}

/** The kubelet's part between churns: evicted containers created again; missed ones past their deadline judged. */
async function kubeletStep() {
  for (const rec of pods) {
    const app = rec.app;
    if (!app || app.judged || app.env !== 'absent') continue;
    if (app.evicted) {
      const code = await recreateApp(rec).catch(() => undefined);
      if (code !== undefined) {
        judgeApp(app);
        onApp(rec);
        if (code !== 137) say(`soak-${rec.n}: the evicted container exited ${code}, not 137`);
      }
    } else if (Date.now() - app.createdAt > REPORT_WITHIN_MS && (app.reported ? rec.evict : true)) {
      judgeApp(app); // not reported, or reported but never evicted where asked
    }
  }
}

/** One churn: the oldest pod without a reader removed, a new one created. */
async function churnOnce(next) {
  await kubeletStep();
  if (pods.length >= S.pods) {
    const victim = pods.findIndex((p) => !p.reader);
    if (victim < 0) return; // every pod has a reader: nothing to churn
    const [rec] = pods.splice(victim, 1);
    await dropPod(rec);
  }
  await addPod(next, { reader: false, evict: next % 2 === 1 });
}

/** The measured part: churn, rotations, kills, the restart, a row a minute, until the end or a stop. */
async function soak() {
  const run = { t0: Date.now(), endAt: Date.now() + S.minutes * 60_000, lock: Promise.resolve(), restarting: false };
  // CRI work (a churn, the restart, a row) one at a time
  const serial = (fn) => (run.lock = run.lock.then(fn, fn));
  const timers = [rotationTimer(), setInterval(() => pollReaders(), 5000)];
  const loops = [churnLoop(run, serial), killLoop(run), restartOnce(run, serial)];
  try {
    for (let m = 1; m <= S.minutes && !stop.requested; m++) {
      await pause(run.t0 + m * 60_000 - Date.now());
      if (stop.requested) break;
      pollReaders();
      await serial(async () => rows.push(sampleRow((Date.now() - run.t0) / 60_000)));
      say(rowLine(rows[rows.length - 1]));
    }
  } catch (err) {
    requestStop(); // the loops end now
    throw err;
  } finally {
    for (const t of timers) clearInterval(t);
    // the loops end at endAt by themselves, or at once after a stop request
    await Promise.allSettled(loops);
    await run.lock.catch(() => {});
  }
  return { minutes: (Date.now() - run.t0) / 60_000 };
}

/** The kubelet's rewrites: one pod every SOAK_ROTATE_S / SOAK_PODS seconds, round robin. */
function rotationTimer() {
  let k = 0;
  return setInterval(
    () => {
      const live = pods.filter((p) => p.app && !p.removing);
      if (live.length === 0) return;
      const rec = live[k++ % live.length];
      try {
        rotate(rec, clock.now);
        tally.rotations++;
      } catch {
        // the pod went meanwhile
      }
    },
    (S.rotateS * 1000) / S.pods,
  );
}

/** One pod removed and created again every SOAK_CHURN_S (no backlog when a churn takes longer). */
async function churnLoop(run, serial) {
  if (S.churnS <= 0) return;
  let n = S.pods;
  for (let next = Date.now(); !stop.requested && Date.now() < run.endAt;) {
    await pause(next - Date.now());
    if (stop.requested || Date.now() >= run.endAt) break;
    next = Math.max(next + S.churnS * 1000, Date.now());
    await serial(() => churnOnce(n++));
  }
}

/** The worker SIGKILLed every SOAK_KILL_S, a quarter period off the minute: the rows see it at two ages, never at its restart. */
async function killLoop(run) {
  if (S.killS <= 0) return;
  for (let at = run.t0 + (S.killS * 1000) / 4; !stop.requested && at < run.endAt; at += S.killS * 1000) {
    await pause(at - Date.now());
    if (stop.requested || run.restarting) continue;
    const pid = eh.status()?.workerPid;
    try {
      if (pid) process.kill(pid, 'SIGKILL');
      tally.kills++;
    } catch {
      // gone already
    }
  }
}

/** containerd stopped and started again half-way (off the minute), the pods running on; until envhook registered again. */
async function restartOnce(run, serial) {
  await pause(run.t0 + S.minutes * 30_000 + 7_000 - Date.now());
  if (stop.requested) return;
  await serial(async () => {
    run.restarting = true;
    const regs = eh.status()?.counts?.registrations ?? 0;
    const r0 = Date.now();
    await c.restart();
    const end = Date.now() + 120_000;
    while (!(eh.status()?.connected && eh.status().counts.registrations > regs) && Date.now() < end) await pause(100);
    tally.restarts.push({ minute: (r0 - run.t0) / 60_000, registeredMs: eh.status()?.connected ? Date.now() - r0 : NaN });
    run.restarting = false;
    say(`containerd restarted at minute ${((r0 - run.t0) / 60_000).toFixed(1)}; envhook registered again after ${Date.now() - r0} ms`);
  });
}

/** New lines of each reader: the rewrites it saw (latency from the kubelet's swap) and its failed reads by errno. */
function pollReaders() {
  for (const rec of pods) {
    if (!rec.reader) continue;
    const { seen, err } = readerLines(rec);
    for (const line of seen) {
      const [g, up, ok] = line.split(' ').map(Number);
      if (Number.isFinite(ok)) {
        tally.reads += Math.max(0, ok - (rec.reads ?? 0));
        rec.reads = ok;
      }
      const at = rec.swaps.get(g);
      if (at === undefined || !Number.isFinite(up)) continue;
      rec.swaps.delete(g);
      // /proc/uptime is truncated to 10 ms: the reader saw it somewhere in [up, up + 10 ms)
      const ms = (up + 0.005 - at) * 1000;
      tally.seen++;
      tally.lat.add(ms);
      tally.minuteLat.push(ms);
    }
    for (const line of err) tally.fail[readerErrno(line)]++;
  }
}

/** Every live container that got its owned copy shows the latest rewrite (or one made under STALE_AFTER_MS ago), owned by OWNER. */
function checkViews() {
  for (const rec of pods) {
    const app = rec.app;
    if (!app || rec.removing || app.env !== 'applied' || !app.pid) continue;
    let gen;
    let uid;
    try {
      const file = `/proc/${app.pid}/root/keys/gen`;
      gen = Number(fs.readFileSync(file, 'utf8').trim());
      uid = fs.statSync(file).uid;
    } catch {
      continue; // the container went meanwhile
    }
    tally.views++;
    if (gen < rec.gen - 1 || (gen !== rec.gen && Date.now() - rec.rotatedAt > STALE_AFTER_MS)) {
      tally.staleViews++;
      say(`soak-${rec.n}: stale view: ${staleWhy(rec, gen)}`);
    }
    if (uid !== OWNER) tally.notOwnedViews++;
  }
}

/** Where a stale view's rewrite stopped: envhook's copy (its ..data target and generation), the kubelet's, the container's mount. Generations and names only. */
function staleWhy(rec, seen) {
  const read = (f) => {
    try {
      return fs.readFileSync(f, 'utf8').trim();
    } catch (err) {
      return err.code;
    }
  };
  const link = (f) => {
    try {
      return fs.readlinkSync(f);
    } catch (err) {
      return err.code;
    }
  };
  const copy = path.join(runDir, 'volumes', rec.uid, 'keys');
  const mount = fs
    .readFileSync(`/proc/${rec.app.pid}/mountinfo`, 'utf8')
    .split('\n')
    .find((l) => l.split(' ')[4] === '/keys')
    ?.split(' ')[3];
  return `pod ${rec.uid}, the container sees generation ${seen}, the kubelet wrote ${rec.gen} ${((Date.now() - rec.rotatedAt) / 1000).toFixed(1)} s ago (its ..data ${link(path.join(rec.keys, '..data'))}); envhook's copy has ${read(path.join(copy, 'gen'))} (..data ${link(path.join(copy, '..data'))}); the container's /keys is a mount of ${mount}; app container attempt ${rec.app.attempt}, created ${((Date.now() - rec.app.createdAt) / 1000).toFixed(0)} s ago`;
}

function sampleRow(minute) {
  const st = eh.status() ?? {};
  const sup = procSample(eh.child.pid) ?? {};
  const wrk = procSample(st.workerPid) ?? {};
  const survey = runDirSurvey(runDir);
  checkViews();
  const lat = tally.minuteLat.splice(0).sort((a, b) => a - b);
  // containerd's own log, on the tmpfs: cut when large (it appends: O_APPEND)
  if ((fs.statSync(c.paths.log, { throwIfNoEntry: false })?.size ?? 0) > 64 << 20) fs.truncateSync(c.paths.log, 0);
  const counts = st.counts ?? {};
  return {
    minute,
    pods: pods.length,
    supFds: sup.fds ?? NaN,
    wrkFds: wrk.fds ?? NaN,
    supWatches: sup.watches ?? NaN,
    wrkWatches: wrk.watches ?? NaN,
    copies: survey.copies,
    copyDirs: survey.copyDirs,
    copyKiB: survey.copyKiB,
    records: survey.records,
    supRss: sup.rss ?? NaN,
    supAnon: sup.anon ?? NaN,
    supPss: sup.pss ?? NaN,
    wrkRss: wrk.rss ?? NaN,
    wrkAnon: wrk.anon ?? NaN,
    wrkPss: wrk.pss ?? NaN,
    created: tally.created,
    adjusted: counts.adjusted ?? NaN,
    missed: counts.missed ?? NaN,
    evicted: counts.evicted ?? NaN,
    kills: tally.kills,
    rotations: tally.rotations,
    seen: lat.length,
    p50: percentile(lat, 50),
    p99: percentile(lat, 99),
    reads: tally.reads,
    failEACCES: tally.fail.EACCES,
    failENOENT: tally.fail.ENOENT,
    failOther: tally.fail.other,
    load: os.loadavg()[0],
  };
}

function rowLine(r) {
  return `minute ${r.minute.toFixed(1)}: ${r.pods} pods, fds ${r.supFds}/${r.wrkFds}, watches ${r.wrkWatches}, copies ${r.copies} (${r.copyDirs} dirs, ${r.copyKiB} KiB), records ${r.records}, Pss ${r.supPss.toFixed(1)}/${r.wrkPss.toFixed(1)} MiB, created ${r.created} adjusted ${r.adjusted} missed ${r.missed} evicted ${r.evicted}, kills ${r.kills}, seen ${r.seen} (p50 ${r.p50.toFixed(0)} ms), reader failures ${r.failEACCES + r.failENOENT + r.failOther}, load ${r.load.toFixed(2)}`;
}

/** After the run (or a stop): missed containers judged, the end state checked, every pod removed, then envhook and containerd stopped and their directory gone. */
async function cleanUp() {
  const out = {};
  const hard = stop.requested;
  try {
    if (eh && !hard) {
      // missed containers still open get the time a report needs
      for (
        const end = Date.now() + 30_000;
        Date.now() < end &&
        pods.some((p) => p.app && !p.app.judged && p.app.env === 'absent' && !(p.app.reported && (p.app.evicted || !p.evict)));
      ) {
        await kubeletStep().catch(() => {});
        await sleep(1000);
      }
      out.endCopies = { ...(await settle(() => copiesVsLive().extra.length === 0)), ...copiesVsLive() };
    }
    for (const rec of pods) judgeApp(rec.app);
    const all = pods.splice(0);
    for (let i = 0; i < all.length; i += 4) await Promise.all(all.slice(i, i + 4).map((rec) => dropPod(rec)));
    if (eh) {
      const took = await settle(() => {
        const now = runDirSurvey(runDir);
        return now.copies + now.records === 0;
      });
      const after = runDirSurvey(runDir);
      out.afterRemoval = {
        ...took,
        copies: after.copies,
        records: after.records,
        names: after.recordNames.slice(0, 10),
        podDirs: fs.readdirSync(path.join(kubeletRoot, 'pods')).length,
      };
      out.envhookExit = await eh.stop();
    }
  } catch (err) {
    out.cleanupError = String(err.stack ?? err);
    eh?.child.kill('SIGKILL');
  }
  out.leftovers = await c.stop();
  out.dirGone = !fs.existsSync(c.dir);
  return out;
}

/** Pods whose copy should be there (an applied container) against the copies in the run directory. */
function copiesVsLive() {
  const want = new Set(pods.filter((p) => p.everApplied).map((p) => p.uid));
  const have = runDirSurvey(runDir).copyPods;
  return {
    expected: want.size,
    present: have.size,
    extra: [...have].filter((u) => !want.has(u)),
    missing: [...want].filter((u) => !have.has(u)),
  };
}

/**
 * Waits for `ok` up to SETTLE_MS; returns the seconds it took. envhook's registry passes over every
 * watched volume once a minute (src/watch/registry.ts), for events the kernel did not give: a pod
 * whose StopPodSandbox came while no worker was registered goes at the latest then.
 */
async function settle(ok) {
  const t0 = Date.now();
  while (!ok() && Date.now() - t0 < SETTLE_MS) await sleep(200);
  return { seconds: (Date.now() - t0) / 1000 };
}
