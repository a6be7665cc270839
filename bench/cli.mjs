// The envhook builds under test and what they can do yet.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

export const REPO = path.resolve(import.meta.dirname, '..');
export const NODE = path.join(REPO, 'node_modules/node/bin/node');
export const FRONT = path.join(REPO, 'hooks/envhook-runtime');

/** label → argv prefix; the SEA only when built from the current bundle (npm run build). */
export function builds() {
  const out = {
    unbundled: [NODE, path.join(REPO, 'src/cli/main.ts')],
    'bundle (no compile cache)': [NODE, path.join(REPO, 'dist/envhook-main.cjs')],
    bundle: [NODE, path.join(REPO, 'dist/envhook.cjs')],
  };
  const sea = path.join(REPO, 'dist/envhook');
  const mtime = (f) => fs.statSync(f, { throwIfNoEntry: false })?.mtimeMs ?? 0;
  if (mtime(sea) >= mtime(path.join(REPO, 'dist/envhook-main.cjs'))) out.SEA = [sea];
  else console.error('  (dist/envhook missing or older than the bundle: SEA left out; npm run build)');
  const before = BEFORE && path.join(BEFORE, 'dist');
  if (before) {
    out['bundle, before'] = [NODE, path.join(before, 'envhook.cjs')];
    if (fs.existsSync(path.join(before, 'envhook'))) out['SEA, before'] = [path.join(before, 'envhook')];
  }
  return out;
}

/**
 * BENCH_BEFORE=DIR: a copy of the repository's dist/ from an earlier commit, in DIR/dist, timed
 * side by side with the current build in the same run (rows 1, 3, 5): "before" and "after" of a
 * change, without comparing figures across runs. With DIR/hooks/envhook-runtime, rows 2 and 7
 * also time that front (row 7 beside DIR/dist/envhook, as an install places it).
 */
export const BEFORE = process.env.BENCH_BEFORE;
/** BENCH_BEFORE's front, when it has one. */
export const FRONT_BEFORE =
  BEFORE && fs.existsSync(path.join(BEFORE, 'hooks/envhook-runtime')) ? path.join(BEFORE, 'hooks/envhook-runtime') : undefined;

/** Why `envhook inject` cannot be benchmarked yet, or undefined when it can. */
export function injectMissing() {
  const r = spawnSync(NODE, [path.join(REPO, 'dist/envhook.cjs'), 'inject', '--help'], { encoding: 'utf8' });
  // Unknown commands still print the top-level help for --help: look for inject's own usage.
  if (r.status !== 0 || !/Usage: envhook inject/.test(r.stdout))
    return '`envhook inject` not built yet (dist/envhook.cjs has no inject command)';
  const flags = ['--bundle', '--kubelet-root', '--dry-run'].filter((f) => !r.stdout.includes(f));
  return flags.length ? `\`envhook inject\` lacks ${flags.join(', ')}` : undefined;
}

/**
 * Checks that a fixture asks for the work a row claims to measure: `inject --dry-run` must
 * accept its annotations (the real schemas) and plan `expect` = { env, removed, owners }
 * (counts). A fixture the code rejects or half-ignores would time an error path or nothing.
 */
export function verifyPlan(fx, expect) {
  const argv = [...injectArgs([NODE, path.join(REPO, 'dist/envhook.cjs')], fx), '--dry-run'];
  const r = spawnSync(argv[0], argv.slice(1), { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`fixture ${fx.bundle} rejected by inject --dry-run: ${r.stderr.trim()}`);
  const count = (what) => Number(r.stdout.match(new RegExp(`^${what}: (\\d+)$`, 'm'))?.[1]);
  const got = { env: count('env'), removed: count('removed service variables'), owners: count('owners') };
  for (const [k, v] of Object.entries(expect)) {
    if (got[k] !== v) throw new Error(`fixture ${fx.bundle}: inject --dry-run plans ${k} ${got[k]}, the row expects ${v}`);
  }
  return got;
}

/** Why the runtime front cannot be benchmarked yet, or undefined when it can. */
export function frontMissing() {
  if (!fs.existsSync(FRONT)) return 'hooks/envhook-runtime not built yet';
  if (process.getuid?.() !== 0) return 'runc rows need root';
  if (spawnSync('runc', ['--version']).status !== 0) return 'runc not installed';
  return undefined;
}

/**
 * `inject` argv for a fixture (typicalPod / scale fixtures). No --pod-dir: the pod directory is
 * found from the kubelet-made mounts under --kubelet-root, as the shim finds it under containerd.
 */
export function injectArgs(prefix, fx) {
  return [...prefix, 'inject', '--bundle', fx.bundle, '--kubelet-root', fx.pod.root];
}

/**
 * ENVHOOK_BIN values for the runtime front: the single executable, and the bundle behind the
 * two-line sh wrapper `envhook install` writes when there is no single executable.
 */
export function frontBins(work) {
  const wrapper = path.join(work, 'envhook-bundle');
  fs.writeFileSync(wrapper, `#!/bin/sh\nexec '${NODE}' '${path.join(REPO, 'dist/envhook.cjs')}' "$@"\n`, { mode: 0o755 });
  const out = { bundle: wrapper };
  const all = builds();
  if (all.SEA) out.SEA = path.join(REPO, 'dist/envhook');
  if (all['SEA, before']) out['SEA, before'] = all['SEA, before'][0];
  if (all['bundle, before']) {
    const old = path.join(work, 'envhook-bundle-before');
    fs.writeFileSync(old, `#!/bin/sh\nexec '${NODE}' '${all['bundle, before'][1]}' "$@"\n`, { mode: 0o755 });
    out['bundle, before'] = old;
  }
  return out;
}
