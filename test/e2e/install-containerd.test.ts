// containerd end to end with what `envhook install` puts on a node, installed into a temporary
// root (--root): containerd itself accepts the installed config.toml (config dump shows the
// handler); a private containerd runs containers through the installed front
// (`ctr run --runc-binary <root>/usr/local/lib/envhook/envhook-runtime`), which finds the
// installed envhook next to itself and runc on PATH; the admin's settings come from a config
// file under the root (ENVHOOK_CONFIG, as /etc/envhook/config.json on a node); uninstall then
// restores the root byte for byte. Once with the single executable (what `npm run build` makes),
// once with the sh wrapper and the bundle (a build without it).
// containerd 1.6 reads config version 2 only; version 3 output is checked by parsing
// (test/install/containerd/containerd-block.test.ts).
import t, { type Test } from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { CONTAINERD, missingForRunc, parseEnvOutput } from '../helpers/bundle.ts';
import { missingForContainerd, startContainerd } from '../helpers/shim/containerd.ts';
import { HAS_SEA, hostFiles, install, realSource, snapshot, uninstall } from '../helpers/install/install.ts';
import { sharedRootfs } from '../helpers/shim/inject.ts';
import { CANARY, checkInjected, ENV_ANNOTATIONS, FAILING_ANNOTATIONS, FAILING_MESSAGE, FILES, raw } from '../helpers/shim/injected.ts';
import { makePod } from '../../scripts/kubelet-pod.ts';

const missing = missingForRunc() ?? missingForContainerd();
const PREFIX = 'usr/local/lib/envhook';

/** containerd's environment without this process's envhook settings: envhook reads only the config file. */
function nodeEnv(config: string): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('ENVHOOK_')));
  return { ...env, ENVHOOK_CONFIG: config };
}

async function installAndRun(t: Test, bundleOnly: boolean) {
  const dir = t.testdir({});
  const root = path.join(dir, 'root');
  // the admin's files: this machine's config.toml and envhook's settings (kubelet root, log file)
  const pod = makePod(path.join(dir, 'kubelet'), { emptyDirs: { config: FILES } });
  const envhookLog = path.join(dir, 'envhook.log');
  hostFiles(root, {
    'etc/containerd/config.toml': fs.readFileSync('/etc/containerd/config.toml', 'utf8'),
    'etc/envhook/config.json': JSON.stringify({ kubeletRoot: pod.kubeletRoot, logFile: envhookLog, logLevel: 'debug' }) + '\n',
  });
  const original = snapshot(root);

  const r = install({ runtime: 'containerd', root, source: realSource(path.join(dir, 'src'), { bundleOnly }) });
  t.equal(r.status, 0, r.stderr);
  const installed = fs.readdirSync(path.join(root, PREFIX)).sort();
  const wrapper = bundleOnly || !HAS_SEA;
  const executables = wrapper ? ['envhook', 'envhook-main.cjs', 'envhook-runtime', 'envhook.cjs'] : ['envhook', 'envhook-runtime'];
  t.same(
    installed,
    [...executables, 'backup', 'envhook-runtime.conf', 'runtimeclass.yaml', 'state.json'].sort(),
    'the front, its data file, envhook beside it, nothing else to run',
  );
  t.equal(
    fs.readFileSync(path.join(root, PREFIX, 'envhook-runtime.conf'), 'utf8').split('\n')[0],
    'runtime=runc',
    'no runc under the test root: the front looks it up on PATH',
  );
  if (!wrapper)
    t.ok(
      fs.readFileSync(path.join(root, PREFIX, 'envhook')).equals(fs.readFileSync(path.join(realSource(), 'dist/envhook'))),
      'the single executable',
    );

  const dump = spawnSync(CONTAINERD!, ['--config', path.join(root, 'etc/containerd/config.toml'), 'config', 'dump'], { encoding: 'utf8' });
  t.equal(dump.status, 0, dump.stderr);
  const handler =
    /\[plugins\."io\.containerd\.grpc\.v1\.cri"\.containerd\.runtimes\.envhook\]\n([\s\S]*?)\n\s*\n/.exec(dump.stdout)?.[1] ?? '';
  t.match(handler, /pod_annotations = \["envhook\.io\/\*"\]/);
  t.match(handler, /runtime_type = "io\.containerd\.runc\.v2"/);
  t.match(dump.stdout, /runtimes\.envhook\.options\]\n\s*BinaryName = "\/usr\/local\/lib\/envhook\/envhook-runtime"/);
  t.match(
    dump.stdout,
    /\[plugins\."io\.containerd\.grpc\.v1\.cri"\.containerd\.runtimes\.runc\]/,
    'the default runc handler is still there',
  );

  // the handler's BinaryName, seen under the root: ctr run --runc-binary is what the handler does
  const front = path.join(root, PREFIX, 'envhook-runtime');
  const containerd = await startContainerd(nodeEnv(path.join(root, 'etc/envhook/config.json')));
  let n = 0;
  const ctrRun = (annotations: Record<string, string>) => {
    const args = ['run', '--rm', '--rootfs', '--runc-binary', front, '--env', 'PATH=/bin'];
    for (const m of pod.mounts('app'))
      args.push('--mount', `type=bind,src=${m.source},dst=${m.destination},options=${m.options.join(':')}`);
    for (const [k, v] of Object.entries(annotations)) args.push('--annotation', `${k}=${v}`);
    return containerd.ctr([...args, sharedRootfs(), `envhook-install-${process.pid}-${++n}`, '/bin/env']);
  };
  try {
    const ok = ctrRun({ ...pod.annotations('app', 'containerd'), ...raw(ENV_ANNOTATIONS) });
    t.equal(ok.status, 0, ok.stderr);
    checkInjected(t, parseEnvOutput(ok.stdout));
    const bad = ctrRun({ ...pod.annotations('app', 'containerd'), ...raw(FAILING_ANNOTATIONS) });
    t.equal(bad.stderr, `ctr: failed to create shim task: OCI runtime create failed: envhook: ${FAILING_MESSAGE}: unknown\n`);
  } finally {
    await containerd.stop();
  }
  const log = fs.readFileSync(envhookLog, 'utf8');
  t.match(
    log,
    /"container":"app"[^\n]*"msg":"applied; runtime next"/,
    'the installed envhook ran the shim, with the config file under the root',
  );
  t.notMatch(log, new RegExp(`HELLO|${CANARY}`));

  const un = uninstall({ runtime: 'containerd', root });
  t.equal(un.status, 0, un.stderr);
  t.same(snapshot(root), original, 'uninstall restores every file byte for byte');
  t.notOk(fs.existsSync(path.join(root, PREFIX)));
}

t.test(
  'installed from the build (single executable): containerd loads the handler; containers run through the installed front',
  { skip: missing },
  async (t) => {
    if (!HAS_SEA) t.comment('no dist/envhook in this build (ENVHOOK_NO_SEA?): the wrapper and the bundle are installed');
    await installAndRun(t, false);
  },
);

t.test(
  'installed without a single executable (wrapper and bundle): containers run through the installed front',
  { skip: missing },
  async (t) => {
    await installAndRun(t, true);
  },
);
