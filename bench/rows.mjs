// Benchmark rows 1, 2, 3 and 5. Each returns table rows:
// { case, subject, ms, cpu, baseline, baseMs, baseCpu, target } or { case, skip }.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { cmd, measure, loadavg } from './harness.mjs';
import { NODE, FRONT, FRONT_BEFORE, builds, injectMissing, frontMissing, injectArgs, verifyPlan, frontBins } from './cli.mjs';
import { typicalPod, makeRootfs, resetOwners } from './fixtures.mjs';

const nodeE0 = () => cmd('node -e 0', [NODE, '-e', '0']);

// The typical pod's plan: 10 fileKeyRefs + 100 envFrom variables + 1 value; 50 services' links.
const TYPICAL_PLAN = { env: 111, removed: 350, owners: 100 };

function compare(name, base, subjects, target) {
  const load = loadavg();
  const ms = measure([base, ...subjects]);
  const cpu = (c) => ms.cpu[c.label];
  return subjects.map((s) => ({
    case: name,
    subject: s.label,
    ms: ms[s.label],
    cpu: cpu(s),
    baseline: base.label,
    baseMs: ms[base.label],
    baseCpu: cpu(base),
    target,
    load,
  }));
}

/** 5: start-up of each build (`version`) against `node -e 0`. */
export function startup() {
  const subjects = Object.entries(builds()).map(([label, argv]) => cmd(label, [...argv, 'version']));
  return compare('5 start-up (version)', nodeE0(), subjects);
}

/** 1: inject of the typical pod against `node -e 0`. Target +12 ms. */
export function injectTypical(work) {
  const skip = injectMissing();
  if (skip) return [{ case: '1 inject, typical pod', skip }];
  const fx = typicalPod(path.join(work, 'typical'));
  verifyPlan(fx, TYPICAL_PLAN);
  const prepare = () => (fx.restore(), resetOwners(fx.pod));
  const { unbundled, ...fast } = builds();
  const subjects = Object.entries(fast).map(([label, argv]) => cmd(`inject, ${label}`, injectArgs(argv, fx), { prepare }));
  // The same with the bundle on this machine's disk: what the two fsyncs cost off tmpfs.
  const disk = typicalPod(path.join(work, 'typical-disk'), { onDisk: true });
  const best = fast.SEA ? ['SEA', fast.SEA] : ['bundle', fast.bundle];
  subjects.push(
    cmd(`inject, ${best[0]}, bundle on disk`, injectArgs(best[1], disk), { prepare: () => (disk.restore(), resetOwners(disk.pod)) }),
  );
  return compare('1 inject, typical pod', nodeE0(), subjects, { addMs: 12 });
}

/** 2: `envhook-runtime state ID` against `runc state ID`, on a created container. Target +2 ms. */
export function passThrough(work) {
  const skip = frontMissing();
  if (skip) return [{ case: '2 pass-through state', skip }];
  const root = path.join(work, 'runc-root');
  const fx = typicalPod(path.join(work, 'state'), { rootfs: makeRootfs(path.join(work, 'state-rootfs')) });
  const id = `envhook-bench-state-${process.pid}`;
  const g = ['--root', root];
  spawnSync('runc', [...g, 'delete', '-f', id]);
  fs.writeFileSync(
    path.join(fx.bundle, 'config.json'),
    fs.readFileSync(path.join(fx.bundle, 'config.json'), 'utf8').replace('"/bin/true"', '"/bin/sleep", "3600"'),
  );
  const created = spawnSync('runc', [...g, 'create', '--bundle', fx.bundle, id], { stdio: 'ignore' });
  if (created.status !== 0) return [{ case: '2 pass-through state', skip: `runc create failed (status ${created.status})` }];
  try {
    const before = FRONT_BEFORE ? [cmd('envhook-runtime state, before (BENCH_BEFORE)', [FRONT_BEFORE, ...g, 'state', id])] : [];
    return compare(
      '2 pass-through state',
      cmd('runc state', ['runc', ...g, 'state', id]),
      [cmd('envhook-runtime state', [FRONT, ...g, 'state', id]), ...before],
      { addMs: 2 },
    );
  } finally {
    spawnSync('runc', [...g, 'delete', '-f', id]);
  }
}

/**
 * 3: `runc run` of /bin/true through the front against plain `runc run`, same bundle, with the
 * front running each build (ENVHOOK_BIN): the single executable and the bundle. The shim gets
 * runc's argv only, so the pod is found from the mounts under ENVHOOK_KUBELET_ROOT.
 */
export function runThroughShim(work) {
  const skip = frontMissing() ?? injectMissing();
  if (skip) return [{ case: '3 runc run via shim', skip }];
  const root = path.join(work, 'runc-root');
  const fx = typicalPod(path.join(work, 'run'), { rootfs: makeRootfs(path.join(work, 'run-rootfs')) });
  verifyPlan(fx, TYPICAL_PLAN);
  const config = path.join(fx.bundle, 'config.json');
  const prepare = () => (fx.restore(), resetOwners(fx.pod));
  let n = 0;
  const run = (label, bin, env = {}) => {
    const c = cmd(label, [bin, '--root', root, 'run', '--bundle', fx.bundle, 'id'], { prepare, env });
    c.prepare = () => (prepare(), (c.argv[c.argv.length - 1] = `envhook-bench-run-${process.pid}-${++n}`));
    return c;
  };
  const subjects = Object.entries(frontBins(work)).map(([label, bin]) =>
    run(`envhook-runtime run (${label})`, FRONT, { ENVHOOK_BIN: bin, ENVHOOK_KUBELET_ROOT: fx.pod.root }),
  );
  // Each subject must really have rewritten config.json (not passed it through untouched).
  for (const s of subjects) {
    s.prepare();
    const r = spawnSync(s.argv[0], s.argv.slice(1), { env: s.env, encoding: 'utf8' });
    const applied = JSON.parse(fs.readFileSync(config, 'utf8')).annotations?.['envhook.io/applied'];
    if (r.status !== 0 || !applied) throw new Error(`${s.label}: exited ${r.status}, applied ${applied ?? 'nothing'}: ${r.stderr.trim()}`);
  }
  return compare('3 runc run /bin/true', run('runc run', 'runc'), subjects);
}
