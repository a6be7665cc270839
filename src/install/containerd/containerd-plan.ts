// What `install --runtime containerd` writes: envhook's block where containerd keeps it (read as
// containerd reads the root file and its imports), the RuntimeClass, and the check that
// containerd's own `config dump` shows the handler afterwards.
import { EnvhookError } from '../../errors.ts';
import { absolute, DEFAULT_CONFIG, makeLayout, type Layout } from '../layout.ts';
import { runtimeClass, type RuntimePlan } from '../targets.ts';
import { containerdBlock, inheritedOptions } from './containerd-block.ts';
import { findContainerd, type ContainerdBinary } from './containerd-binary.ts';
import { missingBinary, pathFor } from '../../oci/runtime-binary.ts';
import { readContainerdConfig, type ContainerdConfig } from './containerd-config.ts';
import { placeBlock } from './containerd-place.ts';
import { checkContainerd } from './containerd-check.ts';
import { refuseUnloadedRoot } from '../config-read.ts';

export interface ContainerdOptions {
  /** The containerd binary to ask (version, config dump); default: containerd on PATH. */
  containerd?: string | undefined;
  /** Write the block into this file, which the root file imports. */
  dropIn?: string | undefined;
  /** --config is the file containerd's service starts it with. */
  serviceConfig?: boolean | undefined;
}

export function containerdPlan(layout: Layout, opts: ContainerdOptions): RuntimePlan {
  const binary = findContainerd(opts.containerd, layout.root);
  const dropIn = opts.dropIn === undefined ? undefined : absolute(opts.dropIn, '--drop-in');
  refuseImportedRoot(layout, binary);
  refuseUnloadedRoot(layout, opts.serviceConfig);
  const config = readContainerdConfig(layout, { root: layout.config, binary, newFile: dropIn });
  const place = placeBlock(config, dropIn);
  const block = containerdBlock(layout, place);
  const want = { front: layout.front, options: inheritedOptions(place.defaultRuntime), defaultName: place.defaultName };
  const plan: RuntimePlan = {
    files: [{ file: layout.runtimeClass, content: runtimeClass(), mode: 0o644 }],
    blocks: [block],
    next: [
      'restart containerd to load the handler: systemctl restart containerd (containerd reads its configuration only when it starts)',
      `kubectl apply -f ${layout.runtimeClass}`,
    ],
    notes: [`config version ${config.version}, from ${config.versionFrom}`],
  };
  const skip = checkSkipped(layout, config, binary);
  if (skip) plan.notes!.push(skip);
  else plan.verify = () => checkContainerd(binary!, layout.config, pathFor(binary!, layout.root, layout.config), layout.root, want);
  return plan;
}

function checkSkipped(layout: Layout, config: ContainerdConfig, binary: ContainerdBinary | undefined): string | undefined {
  if (!binary) return `not checked with containerd: ${missingBinary('containerd', layout.root)} (--containerd PATH names one)`;
  if (binary.root === layout.root) return undefined; // run inside the root: it reads what the node's containerd reads
  // a --containerd of this machine reads absolute imports on this machine, not under --root
  const absoluteImports = config.readings[0]!.files.some(
    (f) => Array.isArray(f.doc.imports) && f.doc.imports.some((i) => typeof i === 'string' && i.startsWith('/')),
  );
  if (layout.root !== '/' && absoluteImports)
    return `not checked with containerd: the files import absolute paths, which containerd would read outside --root ${layout.root}`;
  return undefined;
}

/** `--config conf.d/x.toml` where the default root imports it: the admin meant --drop-in. */
function refuseImportedRoot(layout: Layout, binary: ContainerdBinary | undefined): void {
  const main = DEFAULT_CONFIG.containerd;
  if (layout.config === main) return;
  const mainLayout = makeLayout('containerd', { root: layout.root, prefix: layout.prefix, config: main });
  let imported: boolean;
  try {
    const cfg = readContainerdConfig(mainLayout, { root: main, binary });
    imported =
      cfg.readings.some((r) => r.files.slice(1).some((f) => f.path === layout.config)) ||
      isMatchedNew(mainLayout, main, layout.config, binary);
  } catch {
    return; // the default root is not containerd's file here (or unreadable): --config stands
  }
  if (imported) {
    throw new EnvhookError(
      `${layout.config} is imported by ${main}: --config names containerd's root file; name this file with --drop-in ${layout.config}`,
    );
  }
}

function isMatchedNew(mainLayout: Layout, main: string, file: string, binary: ContainerdBinary | undefined): boolean {
  const cfg = readContainerdConfig(mainLayout, { root: main, binary, newFile: file });
  return cfg.readings.some((r) => r.files.slice(1).some((f) => f.path === file));
}
