// The image the DaemonSets run, built in the suite with Podman and no registry
// (Containerfile.scratch: the single executable `npm run build` made, hooks/, and the shared
// libraries ldd finds), then each DaemonSet's container run in it as its manifest says — host
// network, root, its securityContext (privileged for the installer; for envhook nri only the
// capabilities it adds, no_new_privs, a read-only root, the default seccomp profile), its hostPath
// volumes standing on the test's own directories (test/helpers/install/daemonset.ts):
// - examples/daemonset.yaml's installer against a temporary root mounted at /host, --dry-run and
//   for real, compared with the same install run outside the image;
// - examples/nri-daemonset.yaml's `envhook nri` on the NRI socket of a private containerd 2.1.9,
//   which registers it; its processes run with what the securityContext allows; a pod created
//   over CRI gets its env (one from a file another UID wrote, 0600), another an owned copy of a
//   secret that a UID-1000 container reads, across a rewrite; its memory is measured (the
//   DaemonSet's requests come from it); it stops within the grace period.
import t, { type Test } from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { REPO } from '../helpers/bundle.ts';
import { childrenOf, freePort, privilegesOf } from '../helpers/nri/process.ts';
import { buildImage, missingForImage, residentKiB, type BuiltImage } from '../helpers/install/image.ts';
import { INSTALLER_DAEMONSET, NRI_DAEMONSET, imageDirectives, podmanRunOf, readManifest } from '../helpers/install/daemonset.ts';
import { snapshot } from '../helpers/install/install.ts';
import { missingForCri, prepareCriContainerd } from '../helpers/cri/containerd.ts';
import { runPod } from '../helpers/cri/pod.ts';
import { procEnviron } from '../helpers/proc.ts';
import { APP_ANNOTATIONS, APP_CHECKS, CANARY, DB_FILES, SERVICE_ENV, raw } from '../helpers/cri/cases.ts';
import { waitFor } from '../helpers/wait.ts';
import { atomicVolumeDir, atomicWrite } from '../../scripts/kubelet-pod.ts';

t.setTimeout(600_000);

const SEA = path.join(REPO, 'dist/envhook');
const read = (rel: string) => fs.readFileSync(path.join(REPO, rel), 'utf8');

/** The same executable outside the image, with no runtime binary on PATH (the image has none). */
function outside(args: string[]) {
  return spawnSync(SEA, args, { encoding: 'utf8', env: { PATH: '/nonexistent' }, timeout: 60_000 });
}

/** Path → mode and owner of every entry under `root`, for comparing two installs beside their bytes. */
function modes(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of fs.readdirSync(root, { recursive: true, withFileTypes: true })) {
    const p = path.join(e.parentPath, e.name);
    const s = fs.lstatSync(p);
    out[path.relative(root, p)] = `${(s.mode & 0o7777).toString(8)} ${s.uid}:${s.gid}`;
  }
  return out;
}

t.test("the DaemonSets' image, built with Podman from Containerfile.scratch", { skip: missingForImage() }, async (t) => {
  const img = buildImage();
  t.teardown(() => img.cleanup());
  t.comment(`podman build (vfs): ${img.buildSeconds.toFixed(1)} s`);

  await t.test("its files are the recipe's, its entrypoint the Dockerfile's; the commands the DaemonSets run are in it", async (t) => {
    const files = img.paths().filter((p) => !p.endsWith('/'));
    t.same(files.sort(), [...img.files.keys()].sort(), 'the executable, hooks/ and the libraries ldd named: nothing else');
    const config = img.config();
    const docker = imageDirectives(read('Dockerfile'));
    t.same(config.Entrypoint, docker.entrypoint, 'ENTRYPOINT');
    t.same(config.Cmd, docker.cmd, 'CMD');
    const nri = readManifest(NRI_DAEMONSET).spec.template.spec.containers[0];
    t.ok(files.includes(nri.command[0]), `${NRI_DAEMONSET}: ${nri.command[0]}`);
    t.ok(files.includes(config.Entrypoint![0]!), `${INSTALLER_DAEMONSET}: the entrypoint ${config.Entrypoint![0]}`);
    const v = img.run({ entrypoint: [nri.command[0], 'version'] });
    t.equal(v.status, 0, `envhook version: ${v.stderr}`);
    t.equal(v.stdout, outside(['version']).stdout, 'it runs: envhook version, as outside');
    const pkg = JSON.parse(read('package.json'));
    const commit = /^envhook \S+ \(([^;]+); node /.exec(v.stdout)?.[1];
    t.same(
      Object.fromEntries(Object.entries(config.Labels ?? {}).filter(([k]) => k.startsWith('org.opencontainers.image.'))),
      {
        'org.opencontainers.image.title': 'envhook',
        'org.opencontainers.image.version': pkg.version,
        'org.opencontainers.image.revision': commit,
        'org.opencontainers.image.licenses': pkg.license,
      },
      'OCI labels: the version and commit envhook version prints',
    );
  });

  await t.test(`${INSTALLER_DAEMONSET}: the installer against a root at /host, as outside the image`, async (t) => {
    const dir = t.testdir({ inside: {}, outside: {} });
    const spec = readManifest(INSTALLER_DAEMONSET).spec.template.spec;
    const init = spec.initContainers[0];
    const run = (extra: string[]) => {
      const { options, args } = podmanRunOf(spec, init, { host: { '/': path.join(dir, 'inside') } });
      return img.run({ options, args: [...args!, ...extra] });
    };
    // The same install outside the image, its report with the root it was given named as the image's.
    const again = (extra: string[]) => {
      const r = outside(['install', '--root', path.join(dir, 'outside'), ...init.args, ...extra]);
      return { ...r, stdout: r.stdout.replaceAll(path.join(dir, 'outside'), '/host') };
    };

    const dry = run(['--dry-run']);
    t.equal(dry.status, 0, `--dry-run: ${dry.stderr}`);
    t.match(dry.stdout, /would create \/usr\/local\/lib\/envhook\/envhook\n/, 'it would install the executable');
    t.equal(dry.stdout, again(['--dry-run']).stdout, '--dry-run prints the same');
    t.same(fs.readdirSync(path.join(dir, 'inside')), [], '--dry-run wrote nothing');

    const real = run([]);
    t.equal(real.status, 0, `install in the image: ${real.stderr}`);
    const out = again([]);
    t.equal(out.status, 0, `install outside: ${out.stderr}`);
    t.equal(real.stdout, out.stdout, 'the same report');
    const inside = snapshot(path.join(dir, 'inside'));
    t.ok(inside.size > 0, 'files were installed');
    t.same(inside, snapshot(path.join(dir, 'outside')), 'the same files, byte for byte');
    t.same(modes(path.join(dir, 'inside')), modes(path.join(dir, 'outside')), 'with the same modes and owners');
    t.ok(inside.get('usr/local/lib/envhook/envhook')?.equals(fs.readFileSync(SEA)), 'the single executable itself');
    const restarted = run([]);
    t.equal(restarted.status, 0, `install again: ${restarted.stderr}`);
    t.match(restarted.stdout, /^nothing changed: envhook is already installed for containerd/, 'a restarted pod changes nothing');
  });

  await t.test(`${NRI_DAEMONSET}: envhook nri on a private containerd 2.1.9`, { skip: missingForCri('2.1') }, (t) => nriDaemonSet(t, img));
});

async function nriDaemonSet(t: Test, img: BuiltImage) {
  const node = prepareCriContainerd({ version: '2.1', nri: true });
  const name = `envhook-nri-${process.pid}`;
  let stopped = false;
  t.teardown(async () => {
    img.podman(['rm', '--force', '--time', '0', name]);
    if (!stopped) await node.stop();
  });
  await node.start();
  const kubeletRoot = path.join(node.dir, 'kubelet');
  fs.mkdirSync(path.join(kubeletRoot, 'pods'), { recursive: true });
  const ds = readManifest(NRI_DAEMONSET);
  const spec = ds.spec.template.spec;
  const container = spec.containers[0];
  // The NRI socket is nri.sock in containerd's directory; the kubelet root and the run directory
  // are seen at their own paths (envhook nri refuses a run directory that is not at its host path).
  const { options, command } = podmanRunOf(spec, container, {
    host: { '/var/run/nri': node.dir, '/var/lib/kubelet': kubeletRoot, '/run/envhook': path.join(node.dir, 'run-envhook') },
    samePath: ['/var/lib/kubelet', '/run/envhook'],
  });
  t.equal(
    path.basename(node.paths.nriSocket),
    path.basename(command![command!.indexOf('--socket') + 1]!),
    'the socket is where the command looks for it',
  );
  const containerdLog = () => fs.readFileSync(node.paths.log, 'utf8');

  // Host network: the manifest's port 9901 could be taken by anything else on this machine, so the
  // endpoints go to a free port of the loopback (the manifest's port is checked on the manifest).
  const port = await freePort();
  // The instance lock (an abstract unix socket named after --socket) is per network namespace, and
  // this container shares the host's: another test's `envhook nri` or `uninstall --mode nri` of a
  // scratch root, on the default /var/run/nri/nri.sock, would take it over or stop it. The same
  // socket through a link of its own gives this plugin a lock name of its own.
  const socketArg = command![command!.indexOf('--socket') + 1]!;
  const own = `nri-${process.pid}.sock`;
  fs.symlinkSync(path.basename(node.paths.nriSocket), path.join(node.dir, own));
  const entrypoint = command!.map((a, i, all) => {
    if (port && all[i - 1] === '--metrics-address') return `127.0.0.1:${port}`;
    return all[i - 1] === '--socket' ? path.posix.join(path.posix.dirname(socketArg), own) : a;
  });
  img.start(name, { options, entrypoint });
  await waitFor(() => /plugin \\"50-envhook\\" connected and synchronized/.test(containerdLog()), 60_000, 'containerd: plugin connected');
  t.match(
    containerdLog(),
    /plugin \\"external:50-envhook\[\d+\]\\" registered as \\"50-envhook\\"/,
    "containerd's log: registered as an external plugin",
  );
  const pid = img.pid(name);
  const idle = residentKiB(pid);

  // The manifest's securityContext as the kernel applies it, to the supervisor and its worker.
  const sc = container.securityContext;
  const worker = childrenOf(pid)[0]?.pid;
  t.ok(worker, `the supervisor (${pid}) has its worker`);
  for (const [who, p] of [
    ['supervisor', pid],
    ['worker', worker!],
  ] as const) {
    const got = privilegesOf(p);
    t.same(
      { ...got, effective: got.effective.sort() },
      { effective: [...sc.capabilities.add].sort(), noNewPrivs: 1, seccomp: 2 },
      `${who}: only the capabilities the manifest adds, no_new_privs, a seccomp filter (the runtime's default profile)`,
    );
  }
  const root = fs
    .readFileSync(`/proc/${pid}/mountinfo`, 'utf8')
    .split('\n')
    .find((l) => l.split(' ')[4] === '/');
  t.match(root?.split(' ')[5], /^ro(,|$)/, 'the root file system is read-only');

  // A pod as the kubelet creates it, no runtimeClassName: its env comes from the plugin in the image.
  const { 'envhook.io/serviceLinks': _, ...annotations } = APP_ANNOTATIONS;
  const pods = [];
  for (let i = 0; i < 3; i++) {
    const pod = await runPod(node, kubeletRoot, {
      name: `image${i}-${process.pid}`,
      handler: '',
      annotations: raw(annotations),
      emptyDirs: { config: DB_FILES },
    });
    pods.push(pod);
    // The last pod's env file as an init container running as UID 1000 leaves it: 0600, its own
    // (envhook reads it with DAC_OVERRIDE, docs/privileges.md).
    if (i === 2) {
      const file = path.join(pod.pod.emptyDir('config'), 'db.env');
      fs.chownSync(file, 1000, 1000);
      fs.chmodSync(file, 0o600);
    }
    const id = await pod.run({ name: 'app', command: ['sleep', '3600'], env: { POD_ENV: 'kept', ...SERVICE_ENV } });
    const env = procEnviron(await pod.pid(id));
    if (i === 0) {
      // NRI on this runtime cannot remove variables: every case but the service-link switch (cri-nri.test.ts).
      for (const [check, fn] of Object.entries(APP_CHECKS))
        if (check !== 'serviceLinks false') await t.test(check, async (t) => fn(t, env));
    }
    t.equal(env.get('DB'), 'db.internal', `pod ${i}: PID 1 has its env`);
  }
  const busy = residentKiB(pid);
  t.comment(
    `envhook nri in the image: VmRSS ${(idle.vmRss / 1024).toFixed(1)} MiB idle, ${(busy.vmRss / 1024).toFixed(
      1,
    )} MiB after 3 pods (RssAnon ${(idle.rssAnon / 1024).toFixed(1)} / ${(busy.rssAnon / 1024).toFixed(1)} MiB)`,
  );
  const request = /^(\d+)Mi$/.exec(container.resources.requests.memory);
  t.ok(
    request && busy.vmRss <= Number(request[1]) * 1024,
    `the memory request (${container.resources.requests.memory}) covers the measured VmRSS`,
  );

  // Owners under the securityContext: an owned copy of a secret (fchown, fchmod, renames and links
  // in the run directory, under the seccomp filter and the capability set), read by a UID-1000
  // container, and the kubelet's rewrite followed into it (inotify).
  const owners = await runPod(node, kubeletRoot, {
    name: `image-owners-${process.pid}`,
    handler: '',
    annotations: raw({ 'envhook.io/volumeOwners': [{ volume: 'keys', defaultUser: 1000 }] }),
    secrets: { keys: { key: { data: `${CANARY}-key-0\n`, mode: 0o400 } } },
  });
  pods.push(owners);
  const reader = await owners.run({ name: 'app', command: ['sleep', '3600'], volumeMounts: { keys: '/keys' }, user: 1000 });
  const cat = await owners.execSync(reader, ['sh', '-c', 'id -u; cat /keys/key']);
  t.same([cat.exitCode, cat.stdout], [0, `1000\n${CANARY}-key-0\n`], 'owners: UID 1000 reads its owned copy');
  atomicWrite(atomicVolumeDir(owners.pod, 'secret', 'keys'), { key: { data: `${CANARY}-key-1\n`, mode: 0o400 } });
  const keyFile = `/proc/${await owners.pid(reader)}/root/keys/key`;
  await waitFor(
    () => fs.readFileSync(keyFile, 'utf8') === `${CANARY}-key-1\n` && fs.statSync(keyFile).uid === 1000,
    10_000,
    "owners: the kubelet's rewrite in the container's view, owned by 1000",
  );
  t.pass("owners: the kubelet's rewrite reached the container, owned by 1000");

  // The paths the manifest's probes ask for.
  for (const probe of [container.readinessProbe, container.livenessProbe]) {
    const res = await fetch(`http://127.0.0.1:${port}${probe.httpGet.path}`);
    t.equal(res.status, 200, `${probe.httpGet.path}: 200 once registered`);
  }

  const logs = img.logs(name);
  t.notMatch(logs.stdout + logs.stderr, CANARY, 'no value in its output');
  t.equal(logs.stdout, '', 'nothing on stdout');
  const json = logs.stderr.split('\n').filter((l) => l.startsWith('{'));
  t.ok(json.length > 0, 'JSON lines on stderr (kubectl logs)');
  t.match(logs.stderr, /regist/i, 'the registration among them');

  // Kubernetes stops the pod with SIGTERM, then SIGKILL after terminationGracePeriodSeconds.
  const grace = spec.terminationGracePeriodSeconds;
  const from = containerdLog().length;
  const started = performance.now();
  const stop = img.podman(['stop', '--time', String(grace), name]);
  const seconds = (performance.now() - started) / 1000;
  t.equal(stop.status, 0, `podman stop: ${stop.stderr}`);
  t.comment(`podman stop (SIGTERM, grace ${grace} s): ${seconds.toFixed(2)} s`);
  const state = img.podman(['inspect', '--format', '{{.State.ExitCode}}', name]).stdout.trim();
  t.equal(state, '0', 'envhook nri exited 0 at SIGTERM, within the grace period (no SIGKILL)');
  await waitFor(
    () => /connection to plugin \\"50-envhook\\" closed/.test(containerdLog().slice(from)),
    30_000,
    'containerd: connection to the plugin closed',
  );
  for (const pod of pods) await pod.remove();
  stopped = true;
  // The container's envhook named the test's kubelet root in its command line: nothing of it is left.
  t.same(await node.stop(), { processes: [], mounts: [] }, 'nothing left after containerd stops');
}
