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
import { shQuote } from '../sh-quote.ts';
import { findSource, type SourceOptions } from './source.ts';

/**
 * The executables, in install order: envhook first, then the front's data file `conf`, then the
 * front that reads it and runs envhook. No `conf`: no front either (NRI mode runs envhook alone).
 */
export function executableTargets(layout: Layout, opts: SourceOptions, conf?: Target): Target[] {
  const src = findSource(opts.source);
  const frontFiles: Target[] = conf ? [conf, { file: layout.front, content: src.front, mode: 0o755 }] : [];
  if (src.sea) return [{ file: layout.bin, content: fs.readFileSync(src.sea), mode: 0o755 }, ...frontFiles];
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
    { file: layout.libMain, content: fs.readFileSync(src.libMain), mode: 0o644 },
    { file: layout.lib, content: fs.readFileSync(src.lib), mode: 0o644 },
    { file: layout.bin, content: Buffer.from(wrapper), mode: 0o755 },
    ...frontFiles,
  ];
}

/** The hooks.d templates the source ships (hooks/envhook-precreate.json, …, or the ones built in), if any. */
export function hookTemplates(opts: SourceOptions): HookTemplates {
  return findSource(opts.source).hooks;
}
