// `envhook install --mode nri` on a real containerd 1.7.24 (Debian trixie, NRI 0.6.1) driven over
// CRI: install → containerd starts the pre-installed plugin → a pod gets its env and owners →
// containerd restarts → the volume's owners are kept → uninstall leaves config.toml byte for
// byte. containerd 1.7.24 starts a pre-installed plugin without a Synchronize, so the plugin
// started after the restart knows the running pod only from its records in the run directory
// (nri/worker/pod-watch.ts restore()). NRI is on by the config's own `disable = false` (a file install
// leaves as it is); containerd passes a pre-installed plugin no environment, so the test gives it
// its settings as an admin does today: a line added to the installed wrapper, taken out again
// before uninstall.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { missingForCri, prepareCriContainerd } from '../helpers/cri/containerd.ts';
import { runPod } from '../helpers/cri/pod.ts';
import { confineInstalledPlugin, install, nriInstallArgs, realSource, uninstall } from '../helpers/install/install.ts';
import { APP_ANNOTATIONS, APP_CHECKS, CANARY, DB_FILES, onPid1AndExec, OWNERS_ANNOTATION, raw, SERVICE_ENV } from '../helpers/cri/cases.ts';
import { atomicVolumeDir, atomicWrite } from '../../scripts/kubelet-pod.ts';
import { waitFor } from '../helpers/wait.ts';

t.setTimeout(600_000);

const { 'envhook.io/serviceLinks': _links, ...ENV_ANNOTATIONS } = APP_ANNOTATIONS;
const ENV_CHECKS = Object.entries(APP_CHECKS).filter(([name]) => name !== 'serviceLinks false');
// NRI 0.6.1 logs a pre-installed plugin's registration, and nothing about a Synchronize.
const REGISTERED = /plugin \\"pre-connected:50-envhook\[\d+\]\\" registered as \\"50-envhook\\"/;

t.test('containerd 1.7.24: install --mode nri, a pod, a containerd restart, uninstall', { skip: missingForCri('1.7') }, async (t) => {
  const c = prepareCriContainerd({ version: '1.7', nri: true });
  let stopped = false;
  t.teardown(async () => {
    if (!stopped) await c.stop();
  });
  t.comment(c.label);
  const configBefore = fs.readFileSync(c.paths.config);
  const prefix = path.join(c.dir, 'envhook');
  const kubeletRoot = path.join(c.dir, 'kubelet');
  const log = path.join(c.dir, 'envhook.log');
  const settings = path.join(c.dir, 'envhook.json');
  fs.mkdirSync(kubeletRoot);
  fs.writeFileSync(settings, JSON.stringify({ kubeletRoot, logFile: log, logLevel: 'debug', runDir: path.join(c.dir, 'run') }) + '\n');
  const r = install({
    runtime: 'containerd',
    root: '/',
    source: realSource(),
    extra: nriInstallArgs({ config: c.paths.config, prefix, containerd: c.bin.containerd, nriLog: path.join(c.dir, 'nri-plugin.log') }),
  });
  t.equal(r.status, 0, r.stderr);
  t.match(r.stdout, `shows NRI on, with plugins from ${c.paths.nriPlugins}`);
  t.same(fs.readFileSync(c.paths.config), configBefore, 'NRI already on: config.toml not touched');
  const plugin = path.join(c.paths.nriPlugins, '50-envhook');
  const installed = confineInstalledPlugin(plugin, settings);
  const pluginLog = () => (fs.existsSync(log) ? fs.readFileSync(log, 'utf8') : '');
  const containerdLog = () => fs.readFileSync(c.paths.log, 'utf8');

  await c.start();
  await waitFor(() => REGISTERED.test(containerdLog()), 60_000, 'containerd: the pre-installed plugin registered');
  const pod = await runPod(c, kubeletRoot, {
    name: `nri17-${process.pid}`,
    handler: '',
    annotations: raw({ ...ENV_ANNOTATIONS, ...OWNERS_ANNOTATION }),
    emptyDirs: { config: DB_FILES },
    secrets: { tls: { 'tls.key': { data: `${CANARY}-0\n`, mode: 0o400 } } },
  });
  const vol = atomicVolumeDir(pod.pod, 'secret', 'tls');
  const owner = () => fs.lstatSync(path.join(vol, '..data/tls.key')).uid;
  const id = await pod.run({
    name: 'app',
    command: ['sleep', '3600'],
    env: { POD_ENV: 'kept', ...SERVICE_ENV },
    volumeMounts: { tls: '/etc/tls' },
  });
  for (const [name, check] of ENV_CHECKS) await t.test(name, (t) => onPid1AndExec(t, pod, id, check));
  // The container reads envhook's owned copy (docs/ownership.md): its view is owned by the UID and
  // has the kubelet's latest content; the kubelet's own file stays as the kubelet wrote it.
  const view = path.join(`/proc/${await pod.pid(id)}/root`, 'etc/tls/tls.key');
  const viewHas = (n: number) => {
    try {
      return fs.statSync(view).uid === 1000 && fs.readFileSync(view, 'utf8') === `${CANARY}-${n}\n`;
    } catch {
      return false;
    }
  };
  t.ok(viewHas(0), "CreateContainer through the installed plugin: the container's view of the secret owned by 1000");
  t.equal(owner(), 0, "the kubelet's file left as the kubelet wrote it");
  atomicWrite(vol, { 'tls.key': { data: `${CANARY}-1\n`, mode: 0o400 } });
  await waitFor(() => viewHas(1), 10_000, "a rewrite in the container's view, owned (watch from CreateContainer)");

  await t.test('containerd restarted: the plugin it starts again gets no Synchronize, and keeps the owners from its records', async (t) => {
    const from = containerdLog().length;
    const logFrom = pluginLog().length;
    await c.restart();
    await waitFor(() => REGISTERED.test(containerdLog().slice(from)), 60_000, 'the plugin registered again');
    await waitFor(() => /NRI configure/.test(pluginLog().slice(logFrom)), 10_000, 'the new plugin process configured');
    atomicWrite(vol, { 'tls.key': { data: `${CANARY}-2\n`, mode: 0o400 } });
    await waitFor(() => viewHas(2), 10_000, "a rewrite after the restart in the container's view, owned");
    t.match(pluginLog().slice(logFrom), /"why":"restore".*nri: watching pod volume owners/, 'the watch restored from the records');
    t.notMatch(pluginLog().slice(logFrom), /nri: synchronized owner watches/, 'NRI 0.6.1 sent the pre-installed plugin no Synchronize');
    t.equal((await pod.status(id)).state, 1, 'the container still runs');
  });

  await t.test(
    'the pod goes: 1.7.24 sends no StopPodSandbox for a pod it knew before its restart; the watch ends with the pod directory',
    async (t) => {
      await pod.remove();
      // containerd 1.7's NRI layer forgets its pods at a restart and learns them only by syncing a
      // plugin: with a pre-installed plugin alone it stops none of the pods it had.
      t.notMatch(pluginLog(), /nri: pod no longer watched/, 'no StopPodSandbox came');
      fs.rmSync(pod.pod.dir, { recursive: true }); // what the kubelet does once the pod's volumes are torn down
      // A volume read through an owned copy notices its kubelet directory gone at the directory's
      // own inotify event (rm -r takes `..data` first, the directory last), not at the registry's
      // minute pass.
      await waitFor(
        () => /"why":"its volumes are gone".*nri: pod no longer watched/.test(pluginLog()),
        5000,
        'the watch ended with the pod directory, at its event',
      );
      t.same(fs.readdirSync(path.join(c.dir, 'run/nri-owners')), [], 'and its record is removed');
    },
  );
  t.notMatch(`${pluginLog()}\n${containerdLog()}`, CANARY, "no value in the plugin's or containerd's log");

  await c.halt();
  fs.writeFileSync(plugin, installed); // the admin's line out again: uninstall removes what install wrote
  const u = uninstall({ runtime: 'containerd', root: '/', extra: ['--mode', 'nri', '--prefix', prefix] });
  t.equal(u.status, 0, u.stderr);
  t.same(fs.readFileSync(c.paths.config), configBefore, 'config.toml byte for byte as before');
  t.same(fs.readdirSync(c.paths.nriPlugins), [], 'the plugin is gone');
  t.notOk(fs.existsSync(prefix), "and envhook's own directory");
  const from = containerdLog().length;
  await c.restart();
  t.notMatch(containerdLog().slice(from), /50-envhook/, 'containerd starts without it');
  stopped = true;
  t.same(await c.stop(), { processes: [], mounts: [] }, 'teardown leaves no process, mount or shim');
});
