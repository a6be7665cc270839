// Where install takes envhook's own files from: a checkout or the npm package (dist/ and hooks/),
// or an installed envhook (the prefix: `envhook` and its front side by side), so the installed
// executable installs, upgrades and uninstalls with no checkout beside it. The hooks.d templates
// and the front are also built into the CLI bundle (scripts/build.mjs): an installed tree, which
// holds no hooks.d template, installs the same files a checkout does.
import fs from 'node:fs';
import path from 'node:path';
import { EnvhookError } from '../errors.ts';
import { HOOK_FILES } from './layout.ts';
import type { HookTemplates } from './targets.ts';

declare const __ENVHOOK_INSTALL_FILES__: { front: string; precreate: string; createRuntime: string } | undefined;
const EMBEDDED = typeof __ENVHOOK_INSTALL_FILES__ === 'object' ? __ENVHOOK_INSTALL_FILES__ : undefined;

export interface SourceOptions {
  /** A checkout, the npm package, the image's /opt/envhook, or an installed envhook's prefix. */
  source?: string | undefined;
  node?: string | undefined;
}

export interface Source {
  dir: string;
  /** The single executable, when the source has one. */
  sea?: string | undefined;
  /** The bundle: the launcher and the file it loads. */
  lib: string;
  libMain: string;
  front: Buffer;
  hooks: HookTemplates;
}

const CHECKOUT = { sea: 'dist/envhook', lib: 'dist/envhook.cjs', libMain: 'dist/envhook-main.cjs', front: 'hooks/envhook-runtime' };
const INSTALLED = { sea: 'envhook', lib: 'envhook.cjs', libMain: 'envhook-main.cjs', front: 'envhook-runtime' };

export function findSource(explicit?: string): Source {
  if (explicit) {
    const dir = path.resolve(explicit);
    const found = checkout(dir) ?? installed(dir);
    if (!found)
      throw new EnvhookError(
        `--source ${dir}: neither a checkout (hooks/envhook-runtime and dist/envhook, or dist/envhook.cjs with dist/envhook-main.cjs) nor an installed envhook (envhook-runtime beside envhook, or beside envhook.cjs and envhook-main.cjs): name one, or leave --source out`,
      );
    return found;
  }
  // a single executable runs as itself; the bundle as <dir>/envhook.cjs (installed) or
  // <checkout>/dist/envhook.cjs; from a checkout's sources the CLI runs as <checkout>/src/cli/main.ts
  const self = path.dirname(fs.realpathSync(seaFromModule() ? process.execPath : (process.argv[1] ?? process.execPath)));
  let dir = self;
  for (let i = 0; i < 4; i++, dir = path.dirname(dir)) {
    const found = checkout(dir);
    if (found) return found;
  }
  const here = installed(self);
  if (here) return here;
  throw new EnvhookError('cannot find the files to install (hooks/envhook-runtime, dist/envhook): pass --source DIR');
}

function checkout(dir: string): Source | undefined {
  const at = (p: string) => path.join(dir, p);
  const sea = fs.existsSync(at(CHECKOUT.sea)) ? at(CHECKOUT.sea) : undefined;
  if (!fs.existsSync(at(CHECKOUT.front)) || !(sea || bundleIn(dir, CHECKOUT))) return undefined;
  const hooks: HookTemplates = {};
  for (const [stage, name] of Object.entries(HOOK_FILES) as [keyof HookTemplates, string][]) {
    const p = path.join(dir, 'hooks', name);
    if (fs.existsSync(p)) hooks[stage] = fs.readFileSync(p);
  }
  return { dir, sea, lib: at(CHECKOUT.lib), libMain: at(CHECKOUT.libMain), front: fs.readFileSync(at(CHECKOUT.front)), hooks };
}

/** An installed tree: its front (or the one built in), and the bundle beside it or `envhook` itself a single executable. */
function installed(dir: string): Source | undefined {
  const at = (p: string) => path.join(dir, p);
  const bundle = bundleIn(dir, INSTALLED);
  // with the bundle, `envhook` is install's sh wrapper, not something to copy
  const sea = !bundle && isElf(at(INSTALLED.sea)) ? at(INSTALLED.sea) : undefined;
  const front = fs.existsSync(at(INSTALLED.front)) ? fs.readFileSync(at(INSTALLED.front)) : EMBEDDED && Buffer.from(EMBEDDED.front);
  if (!front || !(bundle || sea)) return undefined;
  const hooks: HookTemplates = EMBEDDED
    ? { precreate: Buffer.from(EMBEDDED.precreate), createRuntime: Buffer.from(EMBEDDED.createRuntime) }
    : {};
  return { dir, sea, lib: at(INSTALLED.lib), libMain: at(INSTALLED.libMain), front, hooks };
}

function bundleIn(dir: string, names: { lib: string; libMain: string }): boolean {
  return fs.existsSync(path.join(dir, names.lib)) && fs.existsSync(path.join(dir, names.libMain));
}

function isElf(file: string): boolean {
  let fd: number | undefined;
  try {
    fd = fs.openSync(file, 'r');
    const head = Buffer.alloc(4);
    return fs.readSync(fd, head, 0, 4, 0) === 4 && head.equals(Buffer.from([0x7f, 0x45, 0x4c, 0x46]));
  } catch {
    return false;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

function seaFromModule(): boolean {
  try {
    return (process.getBuiltinModule('node:sea') as { isSea?: () => boolean } | undefined)?.isSea?.() ?? false;
  } catch {
    return false;
  }
}
