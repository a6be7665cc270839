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
  return out;
}

/** Why `envhook inject` cannot be benchmarked yet, or undefined when it can. */
export function injectMissing() {
  const r = spawnSync(NODE, [path.join(REPO, 'dist/envhook.cjs'), 'inject', '--help'], { encoding: 'utf8' });
  // Unknown commands still print the top-level help for --help: look for inject's own usage.
  if (r.status !== 0 || !/Usage: envhook inject/.test(r.stdout)) return '`envhook inject` not built yet (dist/envhook.cjs has no inject command)';
  const flags = ['--bundle', '--pod-dir', '--kubelet-root'].filter((f) => !r.stdout.includes(f));
  return flags.length ? `\`envhook inject\` lacks ${flags.join(', ')}` : undefined;
}

/** Why the runtime front cannot be benchmarked yet, or undefined when it can. */
export function frontMissing() {
  if (!fs.existsSync(FRONT)) return 'hooks/envhook-runtime not built yet';
  if (process.getuid?.() !== 0) return 'runc rows need root';
  if (spawnSync('runc', ['--version']).status !== 0) return 'runc not installed';
  return undefined;
}

/** `inject` argv for a fixture (typicalPod / scale fixtures). */
export function injectArgs(prefix, fx) {
  return [...prefix, 'inject', '--bundle', fx.bundle, '--pod-dir', fx.pod.dir, '--kubelet-root', fx.pod.root];
}
