// Smoke test on containerd 2.1 (Debian sid's static build, fetched into a cache, never
// installed) with the CRI plugin and config version 3: `envhook install` registers the handler
// in the version 3 config, one kubelet-like pod runs through it, a failing start shows
// envhook's message, and teardown leaves nothing. NRI is on with a private socket, as the
// NRI suite will run it, and must not change the shim path.
import t from 'tap';
import fs from 'node:fs';
import { spawnSync } from 'node:child_process';
import { ContainerState } from '../helpers/cri/client.ts';
import { missingForCri } from '../helpers/cri/containerd.ts';
import { prepareWithEnvhook, type CriEnvhook } from '../helpers/cri/envhook.ts';
import { runPod } from '../helpers/cri/pod.ts';
import { APP_ANNOTATIONS, APP_CHECKS, CANARY, DB_FILES, FAILING, onPid1AndExec, raw, SERVICE_ENV } from '../helpers/cri/cases.ts';

// Image import, pods and daemon stops take tens of seconds; more on a busy machine.
t.setTimeout(300_000);
const missing = missingForCri('2.1');

t.test('containerd 2.1, config version 3: a pod through the envhook handler', { skip: missing }, async (t) => {
  const node: CriEnvhook = prepareWithEnvhook({ version: '2.1', nri: true });
  let stopped = false;
  t.teardown(async () => {
    if (!stopped) await node.containerd.stop();
  });
  t.match(
    fs.readFileSync(node.containerd.paths.config, 'utf8'),
    /^version = 3$[\s\S]*runtimes\.envhook\]/m,
    'install wrote the handler into the version 3 config',
  );
  await node.containerd.start();
  t.match(node.containerd.label, /containerd\/v2 2\.1\./);
  t.ok(fs.statSync(node.containerd.paths.nriSocket).isSocket(), 'NRI listens on the private socket');

  const pod = await runPod(node.containerd, node.kubeletRoot, {
    name: `app2-${process.pid}`,
    handler: 'envhook',
    annotations: raw(APP_ANNOTATIONS),
    emptyDirs: { config: DB_FILES },
  });
  const id = await pod.run({ name: 'app', command: ['sleep', '3600'], env: { POD_ENV: 'kept', ...SERVICE_ENV } });
  for (const [name, check] of Object.entries(APP_CHECKS)) await t.test(name, (t) => onPid1AndExec(t, pod, id, check));
  t.ok(
    node.runs().some((l) => l.includes(id)),
    'the container ran envhook',
  );
  t.notOk(
    node.runs().some((l) => l.includes(pod.id)),
    'its sandbox did not',
  );

  const bad = await runPod(node.containerd, node.kubeletRoot, {
    name: `bad2-${process.pid}`,
    handler: 'envhook',
    annotations: raw(FAILING.annotations),
    emptyDirs: { config: DB_FILES },
  });
  const bid = await bad.create({ name: 'app', command: ['sleep', '3600'] });
  await t.rejects(bad.start(bid), 'StartContainer fails');
  const status = await bad.status(bid);
  t.equal(status.state, ContainerState.EXITED);
  t.match(status.message, `envhook: ${FAILING.message}`, "ContainerStatus carries envhook's message");
  t.notMatch(`${status.message} ${node.logText()}`, CANARY);

  await pod.remove();
  stopped = true;
  const left = await node.containerd.stop();
  t.same(left, { processes: [], mounts: [] }, 'teardown leaves no process, mount or shim');
});

t.test(
  "containerd 2.1, a drop-in layout: the root imports conf.d/*.toml, the admin's runc option lives in a drop-in, envhook installs its own drop-in",
  {
    skip: missing,
  },
  async (t) => {
    const admin = [
      'version = 3',
      "[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]",
      '  NoNewKeyring = true',
      '',
    ].join('\n');
    const node: CriEnvhook = prepareWithEnvhook({
      version: '2.1',
      imports: ['conf.d/*.toml'],
      files: { 'conf.d/10-admin.toml': admin },
      dropIn: 'conf.d/50-envhook.toml',
    });
    let stopped = false;
    t.teardown(async () => {
      if (!stopped) await node.containerd.stop();
    });
    const dropIn = `${node.containerd.dir}/conf.d/50-envhook.toml`;
    t.match(fs.readFileSync(dropIn, 'utf8'), /runtimes\.envhook\]/, 'install wrote the handler into its own drop-in');
    t.notMatch(fs.readFileSync(node.containerd.paths.config, 'utf8'), /runtimes\.envhook/, 'the root file is left to the admin');
    const dump = spawnSync(node.containerd.bin.containerd, ['--config', node.containerd.paths.config, 'config', 'dump'], {
      encoding: 'utf8',
    });
    t.equal(dump.status, 0, 'containerd config dump reads the layout');
    const envhookOptions = /runtimes\.envhook\.options\]([^[]*)/.exec(dump.stdout)?.[1] ?? '';
    t.match(
      envhookOptions,
      /NoNewKeyring = true/,
      "the handler carries the runc option the admin set in a drop-in (containerd's own merge)",
    );
    t.match(envhookOptions, /BinaryName = '[^']*envhook-runtime'/, 'and runs the front');
    await node.containerd.start();
    const pod = await runPod(node.containerd, node.kubeletRoot, {
      name: `drop-${process.pid}`,
      handler: 'envhook',
      annotations: raw(APP_ANNOTATIONS),
      emptyDirs: { config: DB_FILES },
    });
    const id = await pod.run({ name: 'app', command: ['sleep', '3600'], env: { POD_ENV: 'kept', ...SERVICE_ENV } });
    for (const [name, check] of Object.entries(APP_CHECKS)) await t.test(name, (t) => onPid1AndExec(t, pod, id, check));
    await pod.remove();
    stopped = true;
    t.same(await node.containerd.stop(), { processes: [], mounts: [] }, 'teardown leaves no process, mount or shim');
  },
);
