// An upgrade of the pre-installed plugin without a runtime restart, on a real containerd over CRI,
// while annotated pods are created every INTERVAL_MS (nri-churn.ts): `envhook install --mode nri`
// put the plugin in containerd's plugin_path (the bundle: dist/envhook.cjs and its launcher),
// containerd started it; a second `envhook install` replaces it with the single executable and
// asks the running plugin to start the new plugin file, which takes over with the hand-over
// (docs/nri-guarantees.md#an-upgrade-of-the-pre-installed-plugin). Counted: containers created from
// the second install's start to 2 s after its end, those without their env, CreateContainer
// failures. Then (containerd 2.1) containerd restarts and starts the new file itself, and
// uninstall stops it; or (1.7) uninstall stops the upgraded instance itself.
import t, { type Test } from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { spawnEnvhook, envhook } from '../helpers/bundle.ts';
import { missingForCri, prepareCriContainerd, type CriContainerd } from '../helpers/cri/containerd.ts';
import { confineInstalledPlugin, HAS_SEA, nriInstallArgs, REAL_NODE, realSource, uninstall } from '../helpers/install/install.ts';
import { percentile, startChurn, type Churn, type ChurnContainer } from '../helpers/nri/churn.ts';
import { alive, type NriStatusFile } from '../helpers/nri/process.ts';
import { sleep, waitFor } from '../helpers/wait.ts';

/** A new pod every INTERVAL_MS (the churn's gaps say what the machine managed). */
const INTERVAL_MS = 35;

interface Node {
  c: CriContainerd;
  kubeletRoot: string;
  runDir: string;
  prefix: string;
  settings: string;
  logFile: string;
  wrapper: string;
}

/** `envhook install` in the background (the churn goes on meanwhile): its exit status and output. */
function installAsync(n: Node, source: string): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const args = ['install', '--runtime', 'containerd', '--root', '/', '--source', source, '--node', REAL_NODE];
  args.push(...nriInstallArgs({ config: n.c.paths.config, prefix: n.prefix, containerd: n.c.bin.containerd }));
  const child = spawnEnvhook(args, ['ignore', 'pipe', 'pipe']);
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  return new Promise((resolve) => child.on('close', (status) => resolve({ status, stdout, stderr })));
}

function statusOf(n: Node): NriStatusFile | undefined {
  try {
    return JSON.parse(fs.readFileSync(path.join(n.runDir, 'nri-status.json'), 'utf8')) as NriStatusFile;
  } catch {
    return undefined;
  }
}

const exeOf = (pid: number): string => fs.readlinkSync(`/proc/${pid}/exe`);
const registeredLines = (log: string): string[] =>
  log.match(/plugin \\"[a-z-]+:50-envhook\[\d+\]\\" registered as \\"50-envhook\\"/g) ?? [];

export function upgradeSuite(version: '1.7' | '2.1'): void {
  const skip = missingForCri(version) ?? (HAS_SEA ? undefined : 'dist/envhook (the single executable the upgrade installs) not built');
  t.test(`containerd ${version}: envhook install upgrades the pre-installed plugin under pod churn, no restart`, { skip }, async (t) => {
    const c = prepareCriContainerd({ version, nri: true });
    let stopped = false;
    t.teardown(async () => {
      if (!stopped) await c.stop();
    });
    t.comment(c.label);
    const n: Node = {
      c,
      kubeletRoot: path.join(c.dir, 'kubelet'),
      runDir: path.join(c.dir, 'run'),
      prefix: path.join(c.dir, 'envhook'),
      settings: path.join(c.dir, 'envhook.json'),
      logFile: path.join(c.dir, 'envhook.log'),
      wrapper: path.join(c.paths.nriPlugins, '50-envhook'),
    };
    fs.mkdirSync(n.kubeletRoot);
    const { kubeletRoot, runDir, logFile } = n;
    fs.writeFileSync(n.settings, JSON.stringify({ kubeletRoot, logFile, logLevel: 'info', runDir, nriSocket: c.paths.nriSocket }) + '\n');

    // the previous version: the bundle
    const first = await installAsync(n, realSource(t.testdir(), { bundleOnly: true }));
    t.equal(first.status, 0, first.stderr);
    // containerd passes a pre-installed plugin no environment: the settings file by the wrapper's one added line
    const installed = confineInstalledPlugin(n.wrapper, n.settings);
    await c.start();
    await waitFor(() => statusOf(n)?.connected === true, 60_000, 'the pre-installed plugin connected', 50);
    const old = statusOf(n)!;
    t.match(old, { runsAs: 'pre-installed' }, 'containerd started the plugin');
    t.equal(exeOf(old.pid), REAL_NODE, 'the previous version runs on Node (the bundle)');

    const churn = startChurn(c, kubeletRoot, { intervalMs: INTERVAL_MS, cap: 32 });
    const release = setInterval(() => churn.advance(Date.now() - 1000), 250);
    t.teardown(() => clearInterval(release));
    let upgraded: NriStatusFile;
    try {
      await flowing(churn, 3);
      const logFrom = fs.readFileSync(c.paths.log, 'utf8').length;
      fs.writeFileSync(n.wrapper, installed); // the admin's line out again: install replaces what it wrote
      const from = Date.now();
      const second = await installAsync(n, realSource());
      const installedAt = Date.now();
      t.equal(second.status, 0, second.stderr);
      t.equal(second.stderr, '', 'nothing on stderr');
      t.match(
        second.stdout,
        new RegExp(
          `^upgraded without a restart of containerd: envhook nri \\(pid ${old.pid}\\) handed over to the one started from the new files \\(pid (\\d+)\\) on ${c.paths.nriSocket.replace(/[.]/g, '\\.')}, no container created without its env; it is registered as an external plugin until containerd restarts and starts the new file itself$`,
          'm',
        ),
        'install says the running plugin handed over to the new one',
      );
      t.notMatch(second.stdout, /^next:/m, 'no next: line: nothing to restart');
      const to = Number(/handed over to the one started from the new files \(pid (\d+)\)/.exec(second.stdout)?.[1]);
      await sleep(2000);
      const w = await windowOf(churn, from, Date.now());
      const sent = churn.containers.flatMap((k) => (k.created && k.created[0] >= from ? [k.created[0]] : [])).sort((a, b) => a - b);
      const gaps = sent.slice(1).map((x, i) => x - sent[i]!);
      t.comment(
        `containerd ${version}: install ${installedAt - from} ms (hand-over included); ${w.created} created, ${w.withoutEnv.length} without env, ${w.failed.length} failed; ` +
          `CreateContainer gaps p50 ${percentile(gaps, 50)} ms, max ${percentile(gaps, 100)} ms`,
      );
      t.ok(w.created > 0, 'containers were created during the upgrade');
      t.same(
        w.withoutEnv.map((k) => k.id),
        [],
        'no container without its env',
      );
      t.same(
        w.failed.map((k) => k.error),
        [],
        'no CreateContainer failure',
      );
      upgraded = statusOf(n)!;
      t.match(upgraded, { pid: to, connected: true, runsAs: 'upgraded' }, 'the status file is the new instance: upgraded, connected');
      t.equal(exeOf(to), path.join(n.prefix, 'envhook'), 'the new instance runs the single executable install put in place');
      await waitFor(() => !alive(old.pid), 10_000, 'the previous supervisor gone', 50).catch(() => {});
      t.notOk(alive(old.pid), `the previous supervisor (pid ${old.pid}) has exited`);
      const ctrdLog = fs.readFileSync(c.paths.log, 'utf8').slice(logFrom);
      t.same(
        registeredLines(ctrdLog).map((l) => l.replace(/\[\d+\]/, '[pid]')),
        ['plugin \\"external:50-envhook[pid]\\" registered as \\"50-envhook\\"'],
        "containerd's log: one registration, the new instance's, as an external plugin under the pre-installed name",
      );
      const st = envhook(['status', '--json', '--prefix', n.prefix, '--run-dir', runDir]);
      t.match(JSON.parse(st.stdout), { runsAs: 'upgraded', nri: 'connected' }, `envhook status --json says how it runs: ${st.stderr}`);
      t.match(
        envhook(['status', '--prefix', n.prefix, '--run-dir', runDir]).stdout,
        /^ {2}runs as: pre-installed, upgraded without a runtime restart: started from its plugin file by the plugin it replaced, /m,
        'and its lines',
      );
    } finally {
      clearInterval(release);
      await churn.stop();
    }
    t.notOk(fs.existsSync(path.join(runDir, 'nri-claims')), 'no claim left once one instance serves alone');

    // One runtime goes on to its restart, the other uninstalls while the upgraded instance runs.
    if (version === '1.7') await uninstallUpgraded(t, n, upgraded!);
    else
      await t.test('containerd restarts: it starts the new plugin file, the upgraded instance has ended', async (t) => {
        const installedNew = confineInstalledPlugin(n.wrapper, n.settings);
        const from = fs.readFileSync(c.paths.log, 'utf8').length;
        await c.restart();
        await waitFor(() => statusOf(n)?.runsAs === 'pre-installed' && statusOf(n)?.connected === true, 60_000, 'pre-installed again', 50);
        const s = statusOf(n)!;
        t.not(s.pid, upgraded.pid, 'a new supervisor');
        t.equal(exeOf(s.pid), path.join(n.prefix, 'envhook'), 'the single executable, from the new file');
        await waitFor(() => !alive(upgraded.pid), 10_000, 'the upgraded instance gone', 50).catch(() => {});
        t.notOk(
          alive(upgraded.pid),
          'the upgraded instance ended when containerd stopped (its socket refused), as the pre-installed one does',
        );
        await sleep(1500);
        t.same(
          registeredLines(fs.readFileSync(c.paths.log, 'utf8').slice(from)).map((l) => l.replace(/\[\d+\]/, '[pid]')),
          ['plugin \\"pre-connected:50-envhook[pid]\\" registered as \\"50-envhook\\"'],
          'one registration after the restart: the runtime-started plugin',
        );
        fs.writeFileSync(n.wrapper, installedNew);
        const u = uninstall({ runtime: 'containerd', root: '/', extra: ['--mode', 'nri', '--prefix', n.prefix, '--run-dir', runDir] });
        t.equal(u.status, 0, u.stderr);
        t.match(u.stdout, `stopped the running envhook nri for ${c.paths.nriSocket} (pid ${s.pid})`);
        t.notOk(alive(s.pid), 'uninstall stopped it');
      });
    stopped = true;
    t.same(await c.stop(), { processes: [], mounts: [] }, 'containerd stopped: no process, mount or shim left');
  });
}

/** uninstall while the upgraded instance runs: stopped through its lock, its run state gone, and containerd starts no envhook after. */
async function uninstallUpgraded(t: Test, n: Node, upgraded: NriStatusFile): Promise<void> {
  await t.test('uninstall while the upgraded instance runs: stopped through its lock; containerd starts nothing after', async (t) => {
    const u = uninstall({ runtime: 'containerd', root: '/', extra: ['--mode', 'nri', '--prefix', n.prefix, '--run-dir', n.runDir] });
    t.equal(u.status, 0, u.stderr);
    t.match(u.stdout, `stopped the running envhook nri for ${n.c.paths.nriSocket} (pid ${upgraded.pid})`);
    t.notOk(alive(upgraded.pid), 'the upgraded instance has exited');
    t.notMatch(u.stdout, /^warning:/m, 'no warning');
    t.notOk(fs.existsSync(path.join(n.runDir, 'nri-status.json')), 'its run state removed');
    t.same(fs.readdirSync(n.c.paths.nriPlugins), [], 'the plugin file is gone');
    const from = fs.readFileSync(n.c.paths.log, 'utf8').length;
    await n.c.restart();
    await sleep(3000);
    t.same(registeredLines(fs.readFileSync(n.c.paths.log, 'utf8').slice(from)), [], 'containerd restarted: no envhook registers');
  });
}

/** Waits until the churn has sent `n` CreateContainers since now. */
async function flowing(churn: Churn, n: number): Promise<void> {
  const since = Date.now();
  await waitFor(() => churn.containers.filter((k) => k.created && k.created[0] >= since).length >= n, 120_000, 'the churn flowing', 50);
}

interface Window {
  created: number;
  withoutEnv: ChurnContainer[];
  failed: ChurnContainer[];
}

/** Containers whose CreateContainer was sent in [from, to], once each of them is classified. */
async function windowOf(churn: Churn, from: number, to: number): Promise<Window> {
  const sent = (k: ChurnContainer) => k.created !== undefined && k.created[0] >= from && k.created[0] <= to;
  await waitFor(() => churn.containers.every((k) => !sent(k) || k.done), 60_000, 'the containers of the window classified', 50);
  const ks = churn.containers.filter(sent);
  return { created: ks.length, withoutEnv: ks.filter((k) => k.env === false), failed: ks.filter((k) => k.error !== undefined) };
}
