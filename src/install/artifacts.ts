// What install copies onto the host: the envhook executable and the sh front next to it (the
// front finds `envhook` in its own directory, and its data file, front-conf.ts). The executable
// is the single-file build `dist/envhook` when present; otherwise the bundle goes next to it (`envhook.cjs`, the launcher,
// and `envhook-main.cjs`, which the launcher loads) and `envhook` is a short sh wrapper running
// the bundle from its own directory with a Node 24 named by --node (default: the Node running
// this install), which must exist on the host. Finding the bundle from its own directory, as the
// front finds `envhook`, keeps an installed tree working wherever it is seen from (a test root, a
// DaemonSet's /host).
import fs from 'node:fs';
import path from 'node:path';
import { EnvhookError } from '../errors.ts';
import type { Layout } from './layout.ts';
import type { HookTemplates, Target } from './targets.ts';
import { HOOK_FILES } from './layout.ts';
import { shQuote } from '../sh-quote.ts';

export interface SourceOptions {
  /** Directory holding dist/ and hooks/ (a checkout, the npm package, or the image's /opt/envhook). */
  source?: string | undefined;
  node?: string | undefined;
}

export function findSource(explicit?: string): string {
  if (explicit) {
    const dir = path.resolve(explicit);
    if (!isSource(dir))
      throw new EnvhookError(`${dir}: no hooks/envhook-runtime and dist/envhook (or dist/envhook.cjs with dist/envhook-main.cjs) here`);
    return dir;
  }
  // a single executable lives at <source>/dist/envhook; the bundle at <source>/dist/envhook{,-main}.cjs;
  // from a checkout the CLI runs as <source>/src/cli/main.ts
  const isSea = seaFromModule();
  let dir = path.dirname(fs.realpathSync(isSea ? process.execPath : (process.argv[1] ?? process.execPath)));
  for (let i = 0; i < 4; i++, dir = path.dirname(dir)) if (isSource(dir)) return dir;
  throw new EnvhookError('cannot find the files to install (hooks/envhook-runtime, dist/envhook): pass --source DIR');
}

function seaFromModule(): boolean {
  try {
    return (process.getBuiltinModule('node:sea') as { isSea?: () => boolean } | undefined)?.isSea?.() ?? false;
  } catch {
    return false;
  }
}

function isSource(dir: string): boolean {
  const has = (p: string) => fs.existsSync(path.join(dir, p));
  return has('hooks/envhook-runtime') && (has('dist/envhook') || (has('dist/envhook.cjs') && has('dist/envhook-main.cjs')));
}

/** The executables, in install order: envhook first, then the front's data file `conf`, then the front that reads it and runs envhook. */
export function executableTargets(layout: Layout, opts: SourceOptions, conf: Target): Target[] {
  const src = findSource(opts.source);
  const read = (p: string) => fs.readFileSync(path.join(src, p));
  const front: Target = { file: layout.front, content: read('hooks/envhook-runtime'), mode: 0o755 };
  if (fs.existsSync(path.join(src, 'dist/envhook'))) {
    return [{ file: layout.bin, content: read('dist/envhook'), mode: 0o755 }, conf, front];
  }
  const node = opts.node ?? fs.realpathSync(process.execPath);
  // an explicit --node is trusted under a --root that is not the host (a test root, say)
  const onHost = fs.existsSync(layout.real(node)) || (opts.node !== undefined && layout.root !== '/');
  if (!path.isAbsolute(node) || !onHost) {
    throw new EnvhookError(`no single executable (dist/envhook) to install and Node ${node} is not on the host: pass --node PATH`);
  }
  const wrapper = [
    '#!/bin/sh',
    '# Written by envhook install: runs the envhook bundle next to this file with Node 24.',
    'self=$(readlink -f -- "$0" 2>/dev/null) || self=$0',
    `exec ${shQuote(node)} "\${self%/*}/${path.posix.basename(layout.lib)}" "$@"`,
    '',
  ].join('\n');
  return [
    // the launcher requires ./envhook-main.cjs: both, the loaded one first
    { file: layout.libMain, content: read('dist/envhook-main.cjs'), mode: 0o644 },
    { file: layout.lib, content: read('dist/envhook.cjs'), mode: 0o644 },
    { file: layout.bin, content: Buffer.from(wrapper), mode: 0o755 },
    conf,
    front,
  ];
}

/** The hooks.d templates the source ships (hooks/envhook-precreate.json, …), if any. */
export function hookTemplates(opts: SourceOptions): HookTemplates {
  const src = findSource(opts.source);
  const out: HookTemplates = {};
  for (const [stage, name] of Object.entries(HOOK_FILES) as [keyof HookTemplates, string][]) {
    const p = path.join(src, 'hooks', name);
    if (fs.existsSync(p)) out[stage] = fs.readFileSync(p);
  }
  return out;
}
