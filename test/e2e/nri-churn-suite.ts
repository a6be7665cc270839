// envhook nri never silently gone, on a real containerd over CRI under continuous annotated pod
// churn (nri-churn.ts): the worker killed with SIGKILL again and again, then stopped with SIGSTOP
// past the runtime's request timeout. For each: time to registered again (containerd's line,
// as t.comment, never asserted), the containers created while it was away (their PID 1 lacks the
// variable) each reported once (warn line with its id, status and metrics count), never two
// registrations at once in containerd's log, and nothing left running after the runtime stops.
// Run as the pre-installed plugin `envhook install --mode nri` writes (containerd starts it; its
// later workers dial the socket as external plugins) and as an external plugin (a DaemonSet's
// way, logs on stderr). ENVHOOK_CHURN_KILLS overrides the kill count of every case.
import t, { type Test } from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { envhook } from '../helpers/bundle.ts';
import { CANARY } from '../helpers/cri/cases.ts';
import { missingForCri, prepareCriContainerd, type CriContainerd } from '../helpers/cri/containerd.ts';
import { confineInstalledPlugin, install, nriInstallArgs, realSource, uninstall } from '../helpers/install/install.ts';
import { nriLogEvents, overlaps, percentile, startChurn, type Churn, type ChurnContainer } from '../helpers/nri/churn.ts';
import { alive, startNriProcess, type NriStatusFile } from '../helpers/nri/process.ts';
import { sleep, waitFor } from '../helpers/wait.ts';

/** What a case needs of the plugin, however it was started. */
interface Plugin {
  c: CriContainerd;
  kubeletRoot: string;
  runDir: string;
  /** install's prefix (the install state `envhook status` reads). */
  prefix: string;
  /** The plugin's JSON log lines (the log file, or stderr). */
  log(): string;
}

function statusOf(p: Plugin): NriStatusFile | undefined {
  try {
    return JSON.parse(fs.readFileSync(path.join(p.runDir, 'nri-status.json'), 'utf8')) as NriStatusFile;
  } catch {
    return undefined; // not written yet, or read between the writer's rename and our open: never torn
  }
}

async function waitStatus(p: Plugin, ok: (s: NriStatusFile) => boolean, what: string, ms = 60_000): Promise<NriStatusFile> {
  const end = Date.now() + ms;
  for (;;) {
    const s = statusOf(p);
    if (s && ok(s)) return s;
    if (Date.now() > end) throw new Error(`status never ${what}: ${JSON.stringify(s)}`);
    await sleep(10);
  }
}

/** waitFor, named as this suite reads: what, then how long (30 s by default). */
const waitUntil = (cond: () => boolean, what: string, ms = 30_000): Promise<void> => waitFor(cond, ms, what, 20);

const metricsBase = (p: Plugin): string =>
  `http://${/"address":"([^"]+)","msg":"nri: metrics and health endpoint listening"/.exec(p.log())![1]}`;
const metric = (text: string, name: string): number => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1]);

/** Figures of one run, for the comment and the report. */
interface Figures {
  kills: number;
  unplannedHangs?: number;
  restartMs: number[];
  missedPerKill: number[];
}

/**
 * `kills` SIGKILLs of the worker, then one SIGSTOP past the request timeout, during churn; every
 * check of items 1-3. Leaves the plugin registered, the churn stopped and every pod removed.
 */
async function killUnderChurn(t: Test, p: Plugin, kills: number): Promise<void> {
  try {
    await killUnderChurnChecked(t, p, kills);
  } finally {
    const out = process.env.ENVHOOK_CHURN_DEBUG;
    if (out)
      fs.writeFileSync(
        `${out}-${path.basename(p.c.dir)}`,
        `${fs.readFileSync(p.c.paths.log, 'utf8')}\n====\n${p.log()}\n====\n${JSON.stringify(lastChurn?.containers ?? [])}`,
      );
  }
}

/** containerd's registration times of the plugin, from its log. */
const registrationTimes = (log: string): number[] =>
  nriLogEvents(log)
    .filter((e) => e.kind === 'registered')
    .map((e) => e.at);

/** One container of the churn for a failure's diagnostics: its CreateContainer against the registrations around it. */
function describeContainer(k: ChurnContainer, registrations: number[]): string {
  const [sent, answered] = k.created ?? [NaN, NaN];
  const before = registrations.filter((r) => r <= sent).pop();
  const after = registrations.find((r) => r > sent);
  return `${k.id}: CreateContainer sent ${before === undefined ? '?' : sent - before} ms after a registration, answered after ${answered - sent} ms, ${after === undefined ? 'no registration after it' : `the next registration ${after - sent} ms after it was sent`}; mark in spec: ${k.marked}`;
}

/** The churn of the last case, for ENVHOOK_CHURN_DEBUG. */
let lastChurn: Churn | undefined;

async function killUnderChurnChecked(t: Test, p: Plugin, kills: number): Promise<void> {
  const clog = () => fs.readFileSync(p.c.paths.log, 'utf8');
  await waitStatus(p, (s) => s.connected && s.counts.registrations === 1, 'registered');
  const churn = startChurn(p.c, p.kubeletRoot);
  lastChurn = churn;
  const figures: Figures = { kills, restartMs: [], missedPerKill: [] };
  const mismatches: string[] = [];
  const missedBefore = (at: number) => churn.containers.filter((k) => k.env === false && k.created![1] < at).length;
  let lastExpected = 0;

  /** A registration containerd logged at `at`: the containers created before it that lack the variable are all counted. */
  const checkWindow = async (at: number) => {
    await churn.settled(at);
    const expected = missedBefore(at);
    figures.missedPerKill.push(expected - lastExpected);
    lastExpected = expected;
    // At least: a hang the test did not cause may have added more since.
    await waitStatus(p, (s) => s.counts.missed! >= expected, `missed ${expected} (${figures.missedPerKill.length} kills)`, 20_000).catch(
      (err: Error) => mismatches.push(err.message),
    );
    churn.advance(at);
    lastRegistration = at;
  };
  let lastRegistration = 0;
  /** Registered a while: a container created since the last registration got its env. */
  const served = () =>
    waitUntil(
      () => churn.containers.some((k) => k.env === true && k.created![0] > lastRegistration),
      'a container with its env since the registration',
      120_000,
    );
  const replaced = async (old: NriStatusFile, at: number, why: string) => {
    const now = await waitStatus(
      p,
      (s) => s.connected && s.workerPid !== old.workerPid && s.counts.registrations! > old.counts.registrations!,
      `registered again after ${why}`,
    );
    // containerd logs the peer's pid with each registration: the new worker's.
    let line;
    await waitUntil(
      () => (line = nriLogEvents(clog()).find((e) => e.kind === 'registered' && e.pid === now.workerPid)) !== undefined,
      `containerd's registration of worker ${now.workerPid}`,
    );
    figures.restartMs.push(line!.at - at);
    return { now, at: line!.at };
  };

  for (let i = 0; i < kills; i++) {
    const before = await waitStatus(p, (s) => s.connected && s.workerPid !== undefined, `registered before kill ${i + 1}`);
    await served();
    await sleep(Math.random() * 400);
    const at = Date.now();
    const victim = statusOf(p)!; // a worker the supervisor replaced meanwhile (a hang under load) is not ours to kill twice
    if (!victim.connected || victim.workerPid !== before.workerPid) {
      i -= 1;
      continue;
    }
    process.kill(victim.workerPid!, 'SIGKILL');
    const back = await replaced(victim, at, `kill ${i + 1}`);
    await checkWindow(back.at);
  }

  // SIGSTOP: the supervisor kills a worker silent for 1 s, before the runtime's 2 s timeout.
  await served();
  const before = await waitStatus(p, (s) => s.connected && s.workerPid !== undefined, 'registered before SIGSTOP');
  const stoppedPid = before.workerPid!;
  const stopAt = Date.now();
  process.kill(stoppedPid, 'SIGSTOP');
  const after = await replaced(before, stopAt, 'SIGSTOP');
  t.ok(after.now.counts.hangs! > before.counts.hangs!, 'SIGSTOP: counted as a hang');
  await sleep(Math.max(0, stopAt + 2500 - Date.now())); // past the runtime's request timeout (2 s)
  let cont = 'sent';
  try {
    process.kill(stoppedPid, 'SIGCONT');
  } catch (err) {
    cont = (err as NodeJS.ErrnoException).code ?? 'error';
  }
  t.equal(cont, 'ESRCH', 'SIGCONT finds no process: the stopped worker was killed, not left to come back registered');
  await checkWindow(after.at);
  await churn.stop();

  const ks = churn.containers;
  const missed = ks.filter((k) => k.env === false);
  t.same(
    ks.filter((k) => k.error).map((k) => `${k.name}: ${k.error}`),
    [],
    'every pod of the churn created, started and removed',
  );
  t.same(mismatches, [], 'after each registration the status counted every container created before it without its env');
  t.ok(
    ks.some((k) => k.env === true),
    'containers created while registered have their env',
  );

  // Reported: one warn line per missed container, with its id; none for the others.
  const lines = p
    .log()
    .split('\n')
    .filter((l) => l.includes('"msg":"nri: container runs without envhook: created while the plugin was not registered"'));
  const reported = lines.map((l) => (JSON.parse(l) as { id: string }).id);
  t.same(
    [...reported].sort(),
    missed.map((k) => k.id!).sort(),
    `each of the ${missed.length} containers created while envhook was away reported once by id, and no other`,
    { unreported: missed.filter((k) => !reported.includes(k.id!)).map((k) => describeContainer(k, registrationTimes(clog()))) },
  );
  t.same(
    missed.filter((k) => k.marked).map((k) => k.id),
    [],
    "no container without the variable has envhook's applied mark in its stored spec",
  );

  // Never two registrations at once. A worker may also be replaced for a hang the test did not
  // cause (its heartbeat starved for 1 s on a loaded machine): counted, reported, not a failure.
  const count = (msg: string) =>
    p
      .log()
      .split('\n')
      .filter((l) => l.includes(`"msg":"${msg}"`)).length;
  const events = nriLogEvents(clog());
  const registrations = events.filter((e) => e.kind === 'registered').length;
  const hangs = count('nri: worker not answering (hung or stopped): killed, to be replaced');
  figures.unplannedHangs = hangs - 1;
  report(t, churn, figures);
  t.same(overlaps(events), [], "containerd's log: every registration of 50-envhook follows the close of the one before", {
    // on a failure: containerd's every line about the plugin, and envhook's worker lines, to tell what opened and closed
    containerd: clog()
      .split('\n')
      .filter((l) => l.includes('50-envhook')),
    envhook: p
      .log()
      .split('\n')
      .filter((l) => /"msg":"nri: (registered|worker|start|connect|closed|the runtime)/.test(l)),
  });
  t.equal(count('nri: registered'), registrations, 'log: each registration containerd logged, once');
  t.equal(count('nri: worker exited: starting another'), kills + hangs, 'log: each worker exit, and every exit was a kill -9 or a hang');
  t.match(
    p.log(),
    new RegExp(`"workerPid":${stoppedPid},"silentMs":\\d+,"msg":"nri: worker not answering`),
    'the hang line names the stopped worker',
  );

  // Item 3: the status file, envhook status --json and the metrics agree.
  const s = await waitStatus(p, (x) => x.connected && x.counts.missed === missed.length, 'final');
  const expected = { registrations, workerRestarts: kills + hangs, hangs, missed: missed.length };
  for (const [k, v] of Object.entries(expected)) t.equal(s.counts[k], v, `status counts.${k}`);
  const st = envhook(['status', '--json', '--run-dir', p.runDir, '--prefix', p.prefix, '--containerd', p.c.bin.containerd]);
  // A container created while envhook was away that still runs without its env is a problem (exit
  // 1), one line naming its pod; a missed one already gone is none. No other line.
  const unapplied = [
    ...st.stderr.matchAll(/^envhook: unapplied: container app of pod (\S+) in namespace default runs without its env/gm),
  ].map((m) => m[1]!);
  const missedPods = new Set(missed.map((k) => k.name));
  t.same(
    unapplied.filter((pod) => !missedPods.has(pod)),
    [],
    `the problem lines name missed containers only (${unapplied.length} of ${missed.length} still running)`,
  );
  t.equal(st.stderr.split('\n').filter(Boolean).length, unapplied.length, `no other line on stderr (${st.stderr})`);
  t.equal(st.status, unapplied.length > 0 ? 1 : 0, 'envhook status: exit 1 exactly when a missed container still runs');
  const json = JSON.parse(st.stdout) as { nri: string; ok: boolean; status: NriStatusFile };
  t.equal(json.nri, 'connected');
  t.equal(json.ok, unapplied.length === 0);
  for (const [k, v] of Object.entries(expected)) t.equal(json.status.counts[k], v, `envhook status --json: counts.${k}`);
  const base = metricsBase(p);
  const text = await (await fetch(`${base}/metrics`)).text();
  t.equal(metric(text, 'envhook_nri_connected'), 1, 'metrics: connected');
  t.equal(metric(text, 'envhook_nri_registrations_total'), expected.registrations, 'metrics: registrations');
  t.equal(metric(text, 'envhook_nri_worker_restarts_total'), expected.workerRestarts, 'metrics: worker restarts');
  t.equal(metric(text, 'envhook_nri_hangs_total'), hangs, 'metrics: hangs');
  t.equal(metric(text, 'envhook_nri_missed_containers_total'), missed.length, 'metrics: missed containers');
  t.equal((await fetch(`${base}/readyz`)).status, 200, '/readyz: 200 while registered');
  t.equal((await fetch(`${base}/healthz`)).status, 200, '/healthz: 200');
  t.notMatch(`${p.log()}\n${JSON.stringify(s)}\n${text}\n${clog()}`, CANARY, "no value in the log, status, metrics or containerd's log");
}

function report(t: Test, churn: Churn, f: Figures): void {
  const gaps = churn.gaps();
  const ks = churn.containers;
  const missed = f.missedPerKill.reduce((a, b) => a + b, 0);
  const killed = f.restartMs.slice(0, f.kills);
  t.comment(
    `churn: ${ks.length} pods, launch gap p50 ${percentile(
      gaps,
      50,
    )} ms, max ${Math.max(...gaps)} ms, at most ${churn.maxAlive()} at once; ` +
      `${f.kills} SIGKILL + 1 SIGSTOP: restart to registered (containerd's line) p50 ${percentile(
        killed,
        50,
      )} ms, p99 ${percentile(killed, 99)} ms, max ${Math.max(...killed)} ms ` +
      `(SIGSTOP: ${f.restartMs.at(
        -1,
      )} ms); hangs the test did not cause: ${f.unplannedHangs}; containers created while away: ${missed} (per kill p50 ${percentile(
        f.missedPerKill,
        50,
      )}, max ${Math.max(...f.missedPerKill)})`,
  );
}

/** The kill count: ENVHOOK_CHURN_KILLS, else the case's own. */
const killCount = (own: number): number => Number(process.env.ENVHOOK_CHURN_KILLS ?? '') || own;

/** containerd with envhook installed by `envhook install --mode nri`; its settings in a config file, as an admin gives them. */
async function preinstalled(t: Test, c: CriContainerd): Promise<Plugin & { wrapper: string; installed: Buffer }> {
  const prefix = path.join(c.dir, 'envhook');
  const kubeletRoot = path.join(c.dir, 'kubelet');
  const runDir = path.join(c.dir, 'run');
  const logFile = path.join(c.dir, 'envhook.log');
  const settings = path.join(c.dir, 'envhook.json');
  fs.mkdirSync(kubeletRoot);
  fs.writeFileSync(
    settings,
    JSON.stringify({ kubeletRoot, logFile, logLevel: 'info', runDir, nriSocket: c.paths.nriSocket, metricsAddress: '127.0.0.1:0' }) + '\n',
  );
  const r = install({
    runtime: 'containerd',
    root: '/',
    source: realSource(),
    extra: nriInstallArgs({ config: c.paths.config, prefix, containerd: c.bin.containerd }),
  });
  t.equal(r.status, 0, r.stderr);
  // containerd passes a pre-installed plugin no environment: the settings file by the wrapper's
  // one added line (taken out again before uninstall); the socket from the settings (nriSocket).
  const wrapper = path.join(c.paths.nriPlugins, '50-envhook');
  const installed = confineInstalledPlugin(wrapper, settings);
  return {
    c,
    kubeletRoot,
    runDir,
    prefix,
    log: () => (fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8') : ''),
    wrapper,
    installed,
  };
}

/** containerd with NRI for one case: stopped at teardown unless the case stopped it (`stop()`, which says what it left). */
function caseContainerd(t: Test, version: '1.7' | '2.1'): { c: CriContainerd; stop: () => ReturnType<CriContainerd['stop']> } {
  const c = prepareCriContainerd({ version, nri: true });
  let stopped = false;
  t.teardown(async () => {
    if (!stopped) await c.stop();
  });
  t.comment(c.label);
  return {
    c,
    stop: () => {
      stopped = true;
      return c.stop();
    },
  };
}

export function churnSuite(version: '1.7' | '2.1', kills: { preinstalled: number; external: number }): void {
  const skip = missingForCri(version);

  t.test(
    `containerd ${version}, pre-installed envhook nri under pod churn: ${killCount(
      kills.preinstalled,
    )} × kill -9, a SIGSTOP, the runtime stopped, uninstall`,
    { skip },
    async (t) => {
      const { c, stop } = caseContainerd(t, version);
      const p = await preinstalled(t, c);
      const started = Date.now();
      await c.start();
      await killUnderChurn(t, p, killCount(kills.preinstalled));
      t.comment(`kills and checks: ${((Date.now() - started) / 1000).toFixed(0)} s`);

      await t.test('the runtime stops: the supervisor and its worker end (its socket is gone)', async (t) => {
        const s = statusOf(p)!;
        await c.halt();
        await waitUntil(() => !alive(s.pid) && !alive(s.workerPid!), 'supervisor and worker gone', 15_000).catch(() => {});
        t.notOk(alive(s.pid), `supervisor ${s.pid} gone`);
        t.notOk(alive(s.workerPid!), `worker ${s.workerPid} gone`);
        t.match(p.log(), /nri: the runtime is gone: the supervisor ends with its worker/);
      });

      await t.test('uninstall while it runs: nothing left', async (t) => {
        const from = fs.readFileSync(c.paths.log, 'utf8').length;
        await c.restart();
        await waitUntil(
          () => /registered as \\"50-envhook\\"/.test(fs.readFileSync(c.paths.log, 'utf8').slice(from)),
          'registered after the restart',
          60_000,
        );
        const s = await waitStatus(p, (x) => x.connected && x.counts.registrations === 1, 'registered after the restart');
        fs.writeFileSync(p.wrapper, p.installed); // the admin's line out again: uninstall removes what install wrote
        const u = uninstall({ runtime: 'containerd', root: '/', extra: ['--mode', 'nri', '--prefix', p.prefix] });
        t.equal(u.status, 0, u.stderr);
        t.same(fs.readdirSync(c.paths.nriPlugins), [], 'the plugin is gone');
        await waitUntil(() => !alive(s.pid), 'supervisor gone', 10_000).catch(() => {});
        t.notOk(alive(s.pid), `supervisor ${s.pid} gone after uninstall (asked to stop through the instance lock)`);
        t.match(u.stdout, `stopped the running envhook nri`);
        await c.halt();
      });
      t.same(await stop(), { processes: [], mounts: [] }, 'containerd stopped: no process, mount or shim left');
    },
  );

  t.test(
    `containerd ${version}, external envhook nri under pod churn: ${killCount(kills.external)} × kill -9, a SIGSTOP, stopped`,
    { skip },
    async (t) => {
      const { c, stop } = caseContainerd(t, version);
      const kubeletRoot = path.join(c.dir, 'kubelet');
      fs.mkdirSync(kubeletRoot);
      await c.start();
      const started = Date.now();
      const nri = startNriProcess(
        ['--socket', c.paths.nriSocket, '--kubelet-root', kubeletRoot, '--log-level', 'info', '--metrics-address', '127.0.0.1:0'],
        { dir: t.testdir(), logToStderr: true },
      );
      t.teardown(() => nri.stop());
      const p: Plugin = { c, kubeletRoot, runDir: nri.runDir, prefix: path.join(c.dir, 'not-installed'), log: nri.log };
      await killUnderChurn(t, p, killCount(kills.external));
      t.comment(`kills and checks: ${((Date.now() - started) / 1000).toFixed(0)} s`);

      await t.test('the runtime stops: not ready, envhook status exits 1; SIGTERM ends both processes', async (t) => {
        const s = statusOf(p)!;
        await c.halt();
        await waitStatus(p, (x) => !x.connected, 'disconnected', 15_000);
        const base = metricsBase(p);
        const ready = await fetch(`${base}/readyz`);
        t.equal(ready.status, 503, '/readyz: 503');
        t.match(await ready.text(), /^not connected since /);
        t.equal(metric(await (await fetch(`${base}/metrics`)).text(), 'envhook_nri_connected'), 0, 'metrics: not connected');
        const st = envhook(['status', '--run-dir', p.runDir, '--prefix', p.prefix, '--containerd', p.c.bin.containerd]);
        t.equal(st.status, 1, 'envhook status: exit 1');
        // One line on stderr: this problem, or a missed container still running without its env
        // (then '(and 1 more above)'); every problem is in the report above it.
        t.match(st.stderr, /^envhook: (NRI plugin not connected since |unapplied: .*\(and \d+ more above\)\n$)/);
        const json = envhook(['status', '--json', '--run-dir', p.runDir, '--prefix', p.prefix, '--containerd', p.c.bin.containerd]);
        const { problems } = JSON.parse(json.stdout) as { problems: string[] };
        t.ok(
          problems.some((l) => /^NRI plugin not connected since /.test(l)),
          `the plugin not connected is among the problems (${problems.length})`,
        );
        t.equal(await nri.stop(), 0, 'SIGTERM: exit 0');
        t.notOk(alive(s.workerPid!), `worker ${s.workerPid} gone`);
      });
      t.same(await stop(), { processes: [], mounts: [] }, 'no process, mount or shim left');
    },
  );
}
