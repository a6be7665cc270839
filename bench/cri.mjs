// Row 7: the kubelet's CRI calls on one private containerd 1.6 with the CRI plugin
// (test/helpers/cri/: the same harness as test/e2e/cri.test.ts), through the `envhook`
// handler that the real `envhook install` registered and through the plain `runc` handler,
// interleaved in the same run (the order rotating every round), medians of wall time per call:
//   7a RunPodSandbox of the typical annotated pod;
//   7b CreateContainer+StartContainer of a container in a pod without envhook annotations;
//   7c CreateContainer+StartContainer of the typical annotated container;
//   7d ExecSync `true` into a running typical annotated container.
// The typical pod is row 1's (bench/fixtures.mjs): 10 fileKeyRefs, 2 envFrom files of 50,
// $(VAR), 50 services' links removed, a 100-file projected volume chowned.
// Targets: 7a and 7b within +2 ms; 7c and 7d within `node -e 0` + 5 ms.
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { RUNS, cmd, loadavg, measure, median } from './harness.mjs';
import { BEFORE, FRONT_BEFORE, NODE, injectMissing } from './cli.mjs';
import { envFileText, serviceEnv } from './fixtures.mjs';
import { missingForCri } from '../test/helpers/cri/containerd.ts';
import { prepareWithEnvhook } from '../test/helpers/cri/envhook.ts';
import { layOutPod, runPod } from '../test/helpers/cri/pod.ts';

const WARMUP = 2;
let label = 'containerd 1.6';
// (test/helpers/cri/cases.ts has the same, but imports tap through its helpers: tap would start a test run here.)
const raw = (annotations) => Object.fromEntries(Object.entries(annotations).map(([k, v]) => [k, JSON.stringify(v)]));
// BENCH_BEFORE with a front and a single executable: a handler `before` running them (cli.mjs).
const HAS_BEFORE = FRONT_BEFORE !== undefined && fs.existsSync(path.join(BEFORE, 'dist/envhook'));
const HANDLERS = ['runc', 'envhook', ...(HAS_BEFORE ? ['before'] : [])];

export function typicalPod() {
  const env = Array.from({ length: 10 }, (_, i) => ({
    name: `FROM_FILE_${i}`,
    valueFrom: { fileKeyRef: { volumeName: 'config', path: 'keys.env', key: `KEY_${String(i).padStart(5, '0')}` } },
  }));
  env.push({ name: 'GREETING', value: 'hello $(FROM_FILE_0) $$HOME' });
  const files = Object.fromEntries(
    Array.from({ length: 100 }, (_, i) => [`file-${String(i).padStart(5, '0')}.pem`, `-----BEGIN CERTIFICATE ${i}-----\n`]),
  );
  return {
    annotations: raw({
      'envhook.io/env': { app: env },
      'envhook.io/envFrom': {
        app: [
          { prefix: 'A_', fileRef: { volumeName: 'config', path: 'a.env' } },
          { prefix: 'B_', fileRef: { volumeName: 'config', path: 'b.env' } },
        ],
      },
      'envhook.io/serviceLinks': { app: false },
      'envhook.io/volumeOwners': [{ volume: 'certs', defaultUser: 1000, items: [{ path: 'file-00000.pem', user: 0 }] }],
    }),
    emptyDirs: {
      config: {
        'keys.env': envFileText({ count: 10, prefix: 'KEY_' }),
        'a.env': envFileText({ count: 50 }),
        'b.env': envFileText({ count: 50 }),
      },
    },
    projected: { certs: files },
  };
}
export const SERVICES = Object.fromEntries(serviceEnv(50).map((e) => [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)]));

/** Times async subjects interleaved, `prepare`/`cleanup` untimed; medians in ms by label. */
async function interleaved(subjects) {
  const times = subjects.map(() => []);
  for (let i = 0; i < WARMUP + RUNS; i++) {
    for (let k = 0; k < subjects.length; k++) {
      const j = (i + k) % subjects.length;
      const s = subjects[j];
      const ctx = await s.prepare?.();
      const t0 = performance.now();
      const res = await s.op(ctx);
      const ms = performance.now() - t0;
      await s.cleanup?.(ctx, res);
      if (i >= WARMUP) times[j].push(ms);
    }
  }
  return Object.fromEntries(subjects.map((s, j) => [s.label, median(times[j])]));
}

function rows(name, ms, target) {
  const load = loadavg();
  const floor =
    ms.shwrap === undefined
      ? []
      : [
          {
            case: name,
            subject: `floor: ${SH_WRAPPER_LABEL}`,
            ms: ms.shwrap,
            baseline: 'runc handler',
            baseMs: ms.runc,
            load,
            containerd: label,
          },
        ];
  const before =
    ms.before === undefined
      ? []
      : [
          {
            case: name,
            subject: 'envhook handler, before (BENCH_BEFORE)',
            ms: ms.before,
            baseline: 'runc handler',
            baseMs: ms.runc,
            target,
            load,
            containerd: label,
          },
        ];
  return [
    { case: name, subject: 'envhook handler', ms: ms.envhook, baseline: 'runc handler', baseMs: ms.runc, target, load, containerd: label },
    ...before,
    ...floor,
  ];
}

// The floor of any sh front (7a, 7b): a third handler whose runtime is a two-line sh script that
// only execs runc. What it costs over runc is the price of the extra sh exec on each call
// (create and start), before the front reads anything.
const SH_WRAPPER_LABEL = 'handler running `#!/bin/sh` + `exec runc "$@"`';
function shWrapper(dir) {
  const file = path.join(dir, 'sh-wrapper');
  const table = 'plugins."io.containerd.grpc.v1.cri".containerd.runtimes.shwrap';
  return `[${table}]\n  runtime_type = "io.containerd.runc.v2"\n[${table}.options]\n  BinaryName = ${JSON.stringify(file)}\n  Root = ${JSON.stringify(path.join(dir, 'shwrap-root'))}\n`;
}

/** The `before` handler: BENCH_BEFORE's front with its envhook beside it, registered as install registers `envhook`. */
function beforeHandler(dir) {
  if (!HAS_BEFORE) return '';
  const front = path.join(dir, 'before/envhook-runtime');
  fs.mkdirSync(path.dirname(front));
  fs.copyFileSync(FRONT_BEFORE, front);
  fs.chmodSync(front, 0o755);
  fs.symlinkSync(path.join(BEFORE, 'dist/envhook'), path.join(dir, 'before/envhook'));
  const table = 'plugins."io.containerd.grpc.v1.cri".containerd.runtimes.before';
  return `[${table}]\n  runtime_type = "io.containerd.runc.v2"\n  pod_annotations = ["envhook.io/*"]\n[${table}.options]\n  BinaryName = ${JSON.stringify(front)}\n`;
}

/** Stops and removes a container, as the kubelet does when it goes (untimed). */
export const removeContainer = (cri, id) =>
  cri.call('StopContainer', { containerId: id, timeout: 0n }).then(() => cri.call('RemoveContainer', { containerId: id }));

/** Every file of the projected volume back to root, so each annotated start chowns the same 100 files. */
function resetOwners(dir) {
  const data = path.join(dir, fs.readlinkSync(path.join(dir, '..data')));
  for (const f of fs.readdirSync(data)) fs.lchownSync(path.join(data, f), 0, 0);
}

export async function criRows() {
  const skip = missingForCri('1.6') ?? injectMissing();
  if (skip) return [{ case: '7 CRI (containerd 1.6)', skip }];
  // No run counter: its extra sh would be timed with the envhook handler.
  // containerd's state (the bundles) on tmpfs, as /run/containerd is on a node: on this machine's
  // disk the fsyncs of config.json's atomic rewrite cost several ms (row 1 shows both).
  const tmpBase = process.env.BENCH_BUNDLE_DIR ?? '/dev/shm';
  const wrapperDir = fs.mkdtempSync(path.join(tmpBase, 'envhook-bench-shwrap-'));
  const node = prepareWithEnvhook({
    version: '1.6',
    countRuns: false,
    logLevel: 'info',
    tmpBase,
    extraConfig: shWrapper(wrapperDir) + beforeHandler(wrapperDir),
  });
  fs.writeFileSync(path.join(wrapperDir, 'sh-wrapper'), `#!/bin/sh\nexec ${JSON.stringify(node.containerd.bin.runc)} "$@"\n`, {
    mode: 0o755,
  });
  await node.containerd.start();
  label = node.containerd.label.replace(/^containerd github\.com\/containerd\/containerd /, 'containerd ');
  const { cri } = node.containerd;
  const out = [];
  try {
    const nodeMs = measure([cmd('node -e 0', [NODE, '-e', '0'])])['node -e 0'];
    const plusNode = { addMs: Math.round((nodeMs + 5) * 10) / 10 };
    const typical = typicalPod();

    const sandbox = await interleaved(
      [...HANDLERS, 'shwrap'].map((handler) => ({
        label: handler,
        prepare: () => layOutPod(node.kubeletRoot, { name: `bench-sb-${handler}`, ...typical }).config,
        op: async (config) => (await cri.call('RunPodSandbox', { config, runtimeHandler: handler })).podSandboxId,
        cleanup: (_config, id) =>
          cri.call('StopPodSandbox', { podSandboxId: id }).then(() => cri.call('RemovePodSandbox', { podSandboxId: id })),
      })),
    );
    out.push(...rows('7a CRI RunPodSandbox (typical annotated pod)', sandbox, { addMs: 2 }));

    const startRow = async (name, podOpts, container, target) => {
      const handlers = podOpts.annotations ? HANDLERS : [...HANDLERS, 'shwrap'];
      const pods = Object.fromEntries(
        await Promise.all(
          handlers.map(async (h) => [h, await runPod(node.containerd, node.kubeletRoot, { name: `bench-${h}`, handler: h, ...podOpts })]),
        ),
      );
      const ms = await interleaved(
        handlers.map((h) => ({
          label: h,
          prepare: () => podOpts.projected && resetOwners(pods[h].pod.dir + '/volumes/kubernetes.io~projected/certs'),
          op: async () => {
            const id = await pods[h].create(container);
            await pods[h].start(id);
            return id;
          },
          cleanup: async () => {
            const { containers } = await cri.call('ListContainers', { filter: { podSandboxId: pods[h].id } });
            for (const c of containers) await removeContainer(cri, c.id);
          },
        })),
      );
      out.push(...rows(name, ms, target));
      return pods;
    };
    await startRow(
      '7b CRI Create+StartContainer, unannotated pod',
      {},
      { name: 'app', command: ['sleep', '3600'], env: SERVICES },
      { addMs: 2 },
    );
    const pods = await startRow(
      `7c CRI Create+StartContainer, typical annotated (target node -e 0 ${nodeMs.toFixed(1)} + 5)`,
      typical,
      { name: 'app', command: ['sleep', '3600'], env: SERVICES, volumeMounts: { certs: '/etc/certs' } },
      plusNode,
    );

    // A running annotated container in each pod; the envhook one must have its env.
    const ids = {};
    for (const h of HANDLERS)
      ids[h] = await pods[h].run({ name: 'app', command: ['sleep', '3600'], env: SERVICES, volumeMounts: { certs: '/etc/certs' } });
    const probe = await pods.envhook.execSync(ids.envhook, ['sh', '-c', 'test -n "$FROM_FILE_0"']);
    if (probe.exitCode !== 0)
      console.error(
        '  7d: ExecSync in the envhook container does not see the injected env (the front has no exec support yet): timed anyway',
      );
    const exec = await interleaved(HANDLERS.map((h) => ({ label: h, op: () => pods[h].execSync(ids[h], ['true']) })));
    out.push(...rows(`7d CRI ExecSync true, annotated container (target node -e 0 ${nodeMs.toFixed(1)} + 5)`, exec, plusNode));
    const applied = node
      .logText()
      .split('\n')
      .filter((l) => l.includes('"container":"app"') && l.includes('applied; runtime next')).length;
    if (applied < RUNS)
      throw new Error(
        `envhook applied env ${applied} times, fewer than the ${RUNS} annotated starts: the envhook handler is not what was timed`,
      );
  } finally {
    const left = await node.containerd.stop();
    fs.rmSync(wrapperDir, { recursive: true, force: true });
    if (left.processes.length || left.mounts.length) console.error(`  7: containerd left ${JSON.stringify(left)}`);
  }
  return out;
}
