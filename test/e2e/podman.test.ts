// Podman with envhook's hooks.d files and a kubelet-like pod: the precreate stage applies env
// (and the createRuntime hook agrees); with only the createRuntime hook, a container asking
// for env fails to start; a failing precreate stops the start with its message in the log.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { makeRootfs, missingForRunc, parseEnvOutput } from '../helpers/bundle.ts';
import { envhookWrapper } from '../helpers/shim/front.ts';
import { CANARY, checkInjected, ENV_ANNOTATIONS, FAILING_ANNOTATIONS, FAILING_MESSAGE, FILES, raw } from '../helpers/shim/injected.ts';
import { makePod, type Pod } from '../../scripts/kubelet-pod.ts';
import { hooksDir, makePodman, missingForPodman, type Podman } from '../helpers/shim/podman.ts';

const missing = missingForRunc() ?? missingForPodman();
let podman: Podman;
let dir: string;
let pod: Pod;
let precreateDir: string;
let createRuntimeDir: string;
let rootfs: string;

if (!missing) {
  t.before(() => {
    dir = t.testdir({ 'envhook.json': '{}' });
    podman = makePodman();
    // Podman writes into a --rootfs (/etc/hosts, /run): a rootfs of its own.
    rootfs = makeRootfs(path.join(dir, 'rootfs'));
    pod = makePod(path.join(dir, 'kubelet'), { emptyDirs: { config: FILES } });
    const envhook = envhookWrapper(path.join(dir, 'bin'));
    const env = [`ENVHOOK_CONFIG=${path.join(dir, 'envhook.json')}`, `ENVHOOK_KUBELET_ROOT=${pod.kubeletRoot}`];
    precreateDir = hooksDir(path.join(dir, 'precreate.d'), 'envhook-precreate.json', envhook, path.join(dir, 'precreate.log'), env);
    createRuntimeDir = hooksDir(path.join(dir, 'hooks.d'), 'envhook-createruntime.json', envhook, path.join(dir, 'hook.log'), env);
  });
  t.teardown(() => podman?.cleanup());
}

const logOf = (name: string) => (fs.existsSync(path.join(dir, name)) ? fs.readFileSync(path.join(dir, name), 'utf8') : '');

/** A pod container as CRI-O would describe it: its annotations and the kubelet's mounts. */
function run(hooksDirs: string[], annotations: Record<string, unknown>) {
  const volumes = pod.mounts('app').map((m) => `${m.source}:${m.destination}:${m.options.includes('ro') ? 'ro' : 'rw'}`);
  return podman.run({
    hooksDirs,
    annotations: { ...pod.annotations('app', 'crio'), ...raw(annotations) },
    rootfs,
    cmd: ['sh', '-c', 'env'],
    volumes,
  });
}

t.test('precreate and createRuntime hooks: the injected variables inside the container', { skip: missing }, async (t) => {
  const r = run([precreateDir, createRuntimeDir], ENV_ANNOTATIONS);
  t.equal(r.status, 0, r.stderr);
  checkInjected(t, parseEnvOutput(r.stdout));
  t.match(logOf('precreate.log'), /"msg":"precreate done"/);
  t.match(logOf('hook.log'), /"msg":"hook done"/);
  t.notMatch(logOf('precreate.log') + logOf('hook.log'), /HELLO|CANARY/);
});

t.test(
  'only the createRuntime hook: a container asking for env fails to start, saying the shim or precreate is needed',
  {
    skip: missing,
  },
  async (t) => {
    const r = run([createRuntimeDir], ENV_ANNOTATIONS);
    t.not(r.status, 0);
    t.equal(r.stdout, '');
    t.match(
      r.stderr,
      /^Error: OCI runtime error: \S+runc: runc create failed: unable to start container process: error during container init: error running hook #0: error running hook: exit status 1, stdout: , stderr: envhook: env requested by annotations "envhook\.io\/env", "envhook\.io\/envFrom" was not applied before the runtime's create: the runtime shim \(hooks\/envhook-runtime in place of runc\) or the precreate hook \(Podman\) is needed; the createRuntime hook alone cannot set variables\n$/,
    );
    t.match(logOf('hook.log'), /"level":50,[^\n]*"msg":"hook failed"/);
  },
);

t.test("a failing precreate: podman shows the hook failed, envhook's message is in its log", { skip: missing }, async (t) => {
  const r = run([precreateDir], FAILING_ANNOTATIONS);
  t.not(r.status, 0);
  t.equal(r.stdout, '');
  t.match(r.stderr, /Error: setting up OCI Hooks: executing \[envhook precreate --log-file \S+precreate\.log\]: exit status 1\n$/);
  t.notMatch(r.stderr + logOf('precreate.log'), CANARY);
  t.match(logOf('precreate.log'), `"message":${JSON.stringify(FAILING_MESSAGE)}`);
  t.match(logOf('precreate.log'), /"level":50,[^\n]*"msg":"precreate failed"/);
});
