// Row 6: `exec --process F` through the front against plain `runc exec --process F`,
// into running containers: one envhook changed (the typical pod: 111 variables set, 350
// service variables removed; the front starts envhook, which rewrites F) and one it did not
// (the front reads the state and greps config.json, no Node). F is written anew before every
// run, as containerd writes it: the stored spec's process (before envhook) with args /bin/true.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { cmd, measure, loadavg } from './harness.mjs';
import { FRONT, frontMissing, injectMissing, frontBins } from './cli.mjs';
import { typicalPod, makeRootfs } from './fixtures.mjs';

const CASE = '6 exec --process';

export function execRows(work) {
  const skip = frontMissing() ?? injectMissing();
  if (skip) return [{ case: CASE, skip }];
  const root = path.join(work, 'exec-root');
  const rootfs = makeRootfs(path.join(work, 'exec-rootfs'));
  const g = ['--root', root];
  const bins = frontBins(work);
  const ids = [];
  try {
    const marked = start('marked', typicalPod(path.join(work, 'exec-marked'), { rootfs }), bins.SEA ?? bins.bundle);
    const plainFx = typicalPod(path.join(work, 'exec-plain'), { rootfs });
    const plainSpec = JSON.parse(fs.readFileSync(path.join(plainFx.bundle, 'config.json'), 'utf8'));
    // The same pod's container without envhook annotations: the front passes its create through.
    plainSpec.annotations = Object.fromEntries(Object.entries(plainSpec.annotations).filter(([k]) => !k.startsWith('envhook.io/')));
    fs.writeFileSync(path.join(plainFx.bundle, 'config.json'), JSON.stringify(plainSpec));
    const plain = start('plain', plainFx, bins.SEA ?? bins.bundle);
    const exec = (label, bin, c, env = {}) => cmd(label, [bin, ...g, 'exec', '--process', c.file, c.id], { prepare: c.write, env });
    const subjects = [exec('envhook-runtime exec, unmarked container', FRONT, plain)];
    for (const [label, bin] of Object.entries(bins))
      subjects.push(exec(`envhook-runtime exec, marked container (${label})`, FRONT, marked, { ENVHOOK_BIN: bin }));
    // Each subject must do what it claims: the marked exec rewrites F, the unmarked leaves it.
    for (const s of subjects) {
      s.prepare();
      const r = spawnSync(s.argv[0], s.argv.slice(1), { env: s.env, encoding: 'utf8' });
      const file = s.argv.at(-2);
      const rewritten = fs.readFileSync(file, 'utf8') !== (file === marked.file ? marked.text : plain.text);
      if (r.status !== 0 || rewritten !== s.label.includes(', marked container'))
        throw new Error(`${s.label}: exited ${r.status}, F ${rewritten ? 'rewritten' : 'untouched'}: ${r.stderr.trim()}`);
    }
    const load = loadavg();
    const base = exec('runc exec', 'runc', marked);
    const ms = measure([base, ...subjects]);
    return subjects.map((s) => ({
      case: CASE,
      subject: s.label,
      ms: ms[s.label],
      cpu: ms.cpu[s.label],
      baseline: base.label,
      baseMs: ms[base.label],
      baseCpu: ms.cpu[base.label],
      load,
    }));
  } finally {
    for (const id of ids) spawnSync('runc', [...g, 'delete', '-f', id]);
  }

  /** create + start `sleep 3600` through the front; the process file containerd would write. */
  function start(name, fx, bin) {
    const config = path.join(fx.bundle, 'config.json');
    const spec = JSON.parse(fs.readFileSync(config, 'utf8'));
    spec.process.args = ['/bin/sleep', '3600'];
    fs.writeFileSync(config, JSON.stringify(spec, null, '\t'));
    const id = `envhook-bench-exec-${name}-${process.pid}`;
    spawnSync('runc', [...g, 'delete', '-f', id]);
    ids.push(id);
    const env = { ...process.env, ENVHOOK_BIN: bin, ENVHOOK_KUBELET_ROOT: fx.pod.root };
    // The container inherits create's stdio: a file, not a pipe spawnSync would wait on.
    const errFile = path.join(work, `exec-${name}.stderr`);
    for (const sub of [
      ['create', '--bundle', fx.bundle, id],
      ['start', id],
    ]) {
      const err = fs.openSync(errFile, 'w');
      const r = spawnSync(FRONT, [...g, ...sub], { env, stdio: ['ignore', 'ignore', err], timeout: 60_000 });
      fs.closeSync(err);
      if (r.status !== 0) throw new Error(`${name}: ${sub[0]} through the front failed: ${fs.readFileSync(errFile, 'utf8').trim()}`);
    }
    const file = path.join(work, `exec-process-${name}.json`);
    const text = JSON.stringify({ ...spec.process, args: ['/bin/true'] });
    return { id, file, text, write: () => fs.writeFileSync(file, text) };
  }
}
