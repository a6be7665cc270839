// `envhook install --runtime containerd --mode nri` for a real containerd 2.1.9 (Debian sid, from
// the cache) with its own directories: the installed pre-installed plugin is started by
// containerd at its next start and registers; uninstall (no --mode: whatever install recorded)
// removes it, and containerd starts without it, also when the admin had edited the wrapper.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { containerd2Binary, missingNriContainerd, startNriContainerd } from '../helpers/nri/containerd.ts';
import { confineInstalledPlugin, install, nriInstallArgs, realSource, uninstall } from '../helpers/install/install.ts';
import { DAEMON_NODE_OPTION, SUPERVISOR_NODE_OPTION, SUPERVISOR_OPTION_ENV } from '../../src/nri/process.ts';
import { waitFor } from '../helpers/wait.ts';
import { childrenOf, parentOf } from '../helpers/nri/process.ts';
import { procEnviron } from '../helpers/proc.ts';
import { envhook } from '../helpers/bundle.ts';

t.setTimeout(300_000);

const SYNCED = /pre-installed NRI plugin \\"50-envhook\\" synchronization success/;

t.test('containerd 2.1.9 starts the plugin install put in its plugin_path', { skip: missingNriContainerd() }, async (t) => {
  const ctrd = await startNriContainerd();
  t.teardown(() => ctrd.cleanup());
  await ctrd.stop();
  const config = path.join(ctrd.dir, 'config.toml');
  const prefix = path.join(ctrd.dir, 'envhook');
  const configBefore = fs.readFileSync(config);
  const extra = nriInstallArgs({ config, prefix, containerd: containerd2Binary(), nriLog: path.join(ctrd.dir, 'nri-plugin.log') });
  const r = install({ runtime: 'containerd', root: '/', source: realSource(), extra });
  t.equal(r.status, 0, r.stderr);
  t.match(r.stdout, `shows NRI on, with plugins from ${ctrd.pluginDir}`);
  t.ok(fs.existsSync(path.join(ctrd.pluginDir, '50-envhook')), "the plugin is in containerd's plugin_path");
  // Its status and records in the test's directory (the settings file by one added line, out again before uninstall).
  const settings = path.join(ctrd.dir, 'envhook.json');
  fs.writeFileSync(settings, JSON.stringify({ runDir: path.join(ctrd.dir, 'run') }) + '\n');
  const installed = confineInstalledPlugin(path.join(ctrd.pluginDir, '50-envhook'), settings);

  let from = ctrd.log().length;
  await ctrd.start();
  await ctrd.waitForLog(SYNCED, 60_000, from);
  t.match(
    ctrd.log().slice(from),
    /plugin \\"pre-connected:50-envhook\[\d+\]\\" registered as \\"50-envhook\\"/,
    'containerd: the installed plugin registered',
  );
  // The daemon, found by its command line under the prefix.
  const daemon = fs
    .readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .find((d) => {
      try {
        const argv = fs.readFileSync(`/proc/${d}/cmdline`, 'utf8').split('\0');
        return argv.some((a) => a.startsWith(prefix)) && argv.includes('nri');
      } catch {
        return false;
      }
    });
  t.ok(daemon, 'the plugin process is running');
  await waitFor(() => fs.existsSync(path.join(ctrd.dir, 'run/nri-status.json')), 10_000, "its status in the test's run directory");
  // What remains: the file containerd ran exited 0 (left for containerd to reap), and envhook runs on
  // its own, the supervisor no child of containerd's, the worker its child.
  const started = childrenOf(ctrd.pid()!).filter((p) => p.name === '50-envhook');
  t.same(
    started.map((p) => [p.state, p.exitStatus]),
    [['Z', 0]],
    'the plugin file containerd started has exited with status 0',
  );
  const statusFile = path.join(ctrd.dir, 'run/nri-status.json');
  const readStatus = () => JSON.parse(fs.readFileSync(statusFile, 'utf8')) as { pid: number; workerPid?: number; connected: boolean };
  await waitFor(() => readStatus().connected && readStatus().workerPid !== undefined, 10_000, 'its status: connected, with a worker');
  const status = readStatus();
  t.not(parentOf(status.pid), ctrd.pid(), 'the supervisor is not a child of containerd');
  t.equal(procEnviron(status.pid).get('ENVHOOK_NRI_HANDED'), '1', 'the supervisor was handed the connection by the file');
  t.equal(parentOf(status.workerPid!), status.pid, "the worker is the supervisor's child");
  // The wrapper gave the supervisor one V8 worker thread and no JIT; its worker the thread alone.
  t.equal(procEnviron(status.pid).get('NODE_OPTIONS'), `${DAEMON_NODE_OPTION} ${SUPERVISOR_NODE_OPTION}`, "the supervisor's NODE_OPTIONS");
  t.equal(procEnviron(status.workerPid!).get('NODE_OPTIONS'), DAEMON_NODE_OPTION, "the worker's NODE_OPTIONS: the JIT kept");
  t.equal(procEnviron(status.workerPid!).get(SUPERVISOR_OPTION_ENV), undefined, 'nor the marker');
  await ctrd.stop();
  fs.writeFileSync(path.join(ctrd.pluginDir, '50-envhook'), installed);

  // the command of the report: no --mode
  const runDir = path.join(ctrd.dir, 'run');
  t.ok(fs.existsSync(path.join(runDir, 'nri-owners')), "the plugin's records of the pods it watched");
  const u = uninstall({ runtime: 'containerd', root: '/', extra: ['--prefix', prefix, '--run-dir', runDir] });
  t.equal(u.status, 0, u.stderr);
  t.same(
    u.stdout.split('\n').filter((l) => l.includes('run state')),
    [
      `remove ${runDir}/nri-status.json (the NRI plugin's run state)`,
      `remove ${runDir}/nri-owners (the NRI plugin's run state)`,
      `remove ${runDir} (the NRI plugin's run state)`,
    ],
    "the stopped plugin's run state goes with the last NRI install",
    { uninstall: `${u.stdout}${u.stderr}` },
  );
  t.notOk(fs.existsSync(runDir), 'nothing left of it');
  const after = envhook(['status', '--prefix', prefix, '--run-dir', runDir]);
  t.same([after.stdout, after.stderr, after.status], ['installed: nothing\n', '', 0], 'status: installed: nothing, and nothing else');
  t.same(fs.readFileSync(config), configBefore, 'config.toml byte for byte as before');
  t.same(fs.readdirSync(ctrd.pluginDir), [], 'uninstall removed the plugin');
  t.notOk(fs.existsSync(prefix), 'and its own directory');
  from = ctrd.log().length;
  await ctrd.start();
  await ctrd.waitForLog(/Synchronizing NRI \(plugin\) with current runtime state/, 30_000, from);
  t.notMatch(ctrd.log().slice(from), /50-envhook/, 'containerd starts without it');
  await ctrd.stop();

  // the admin gave the plugin a setting in its wrapper: uninstall keeps the edit where containerd does not start it
  t.equal(install({ runtime: 'containerd', root: '/', source: realSource(), extra }).status, 0);
  const wrapper = path.join(ctrd.pluginDir, '50-envhook');
  fs.writeFileSync(
    wrapper,
    fs
      .readFileSync(wrapper, 'utf8')
      .replace('export NODE_OPTIONS', 'export NODE_OPTIONS\nENVHOOK_LOG_LEVEL=debug; export ENVHOOK_LOG_LEVEL'),
  );
  const edited = uninstall({ runtime: 'containerd', root: '/', extra: ['--mode', 'nri', '--prefix', prefix] });
  t.equal(edited.status, 0, edited.stderr);
  t.match(edited.stdout, 'moved to ');
  t.same(fs.readdirSync(ctrd.pluginDir), [], 'no plugin left for containerd to start');
  from = ctrd.log().length;
  await ctrd.start();
  await ctrd.waitForLog(/Synchronizing NRI \(plugin\) with current runtime state/, 30_000, from);
  t.notMatch(ctrd.log().slice(from), /50-envhook/, 'containerd starts no envhook plugin');
});
