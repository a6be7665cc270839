// Every install recorded in state.json, checked against the runtime's own reading of its
// configuration (install's own checks: containerd's `config dump`, `crio config`, Podman's
// containers.conf files as Podman reads them): what install wrote may since have been removed
// by the admin, by another install (another --prefix taking the block over), or by an uninstall.
// envhook's own files must still be there, and the runtime must still name them.
import fs from 'node:fs';
import path from 'node:path';
import { EnvhookError } from '../errors.ts';
import { splitBlock } from '../install/block.ts';
import { checkContainerd } from '../install/containerd/containerd-check.ts';
import { checkNri } from '../install/containerd/containerd-nri.ts';
import { checkCrio } from '../install/crio/crio-check.ts';
import { checkCrioNri } from '../install/crio/crio-nri.ts';
import { DEFAULT_PREFIX, HOOK_FILES, makeLayout, type Layout } from '../install/layout.ts';
import { currentHooksDirs } from '../install/podman/podman-plan.ts';
import { pathFor, RuntimeReadFailed } from '../oci/runtime-binary.ts';
import { FIX_FILES, ok, problem, skipped, type CheckResult } from './check.ts';
import type { NodeView, RecordedInstall } from './node.ts';
import { runtimeBinary } from './runtime-binary.ts';

export function installChecks(node: NodeView): CheckResult[] {
  return node.installs.map((i) => installCheck(node, i));
}

/** The check's name: what the runtime must read. */
function checkName(i: RecordedInstall): string {
  return i.mode === 'nri' ? 'nri-plugin' : i.runtime === 'podman' ? 'hooks' : 'handler';
}

/** The command that writes this install again. */
function reinstall(node: NodeView, i: RecordedInstall): string {
  const prefix = node.layout.prefix === DEFAULT_PREFIX ? '' : ` --prefix ${node.layout.prefix}`;
  return `re-run envhook install --runtime ${i.runtime}${i.mode === 'nri' ? ' --mode nri' : ''}${prefix} with the flags it was installed with`;
}

function installCheck(node: NodeView, i: RecordedInstall): CheckResult {
  const name = checkName(i);
  const layout = makeLayout(i.runtime, { root: node.root, prefix: node.layout.prefix, config: i.record.config });
  const gone = Object.keys(i.record.files).filter((f) => !fs.existsSync(layout.real(f)));
  if (gone.length)
    return problem(name, `${i.runtime}: envhook's ${gone.join(', ')} ${gone.length > 1 ? 'are' : 'is'} gone`, reinstall(node, i));
  if (i.runtime === 'podman') return podmanHooks(node, i, layout);
  const b = runtimeBinary(node, i.runtime);
  if ('missing' in b) return skipped(name, `${i.runtime}: not checked with the runtime's own reading: ${b.missing}`);
  // the file install wrote whose directory the runtime must read: CRI-O's hook, the NRI plugin
  const recorded = Object.keys(i.record.files).find((f) =>
    i.mode === 'nri' ? /\/[0-9]{2}-envhook$/.test(f) : f.endsWith(`/${HOOK_FILES.createRuntime}`),
  );
  const external = i.mode === 'nri' && i.record.externalPlugin === true;
  if (!recorded && !(i.mode === 'shim' && b.containerd) && !external)
    return problem(
      name,
      `${i.runtime}: ${layout.state} records no ${i.mode === 'nri' ? 'NRI plugin' : 'hook'} file of envhook's`,
      reinstall(node, i),
    );
  try {
    let line: string;
    if (i.mode === 'shim' && b.containerd) {
      const config = pathFor(b.containerd, node.root, i.record.config);
      line = checkContainerd(b.containerd, i.record.config, config, node.root, { front: layout.front, options: {} });
    } else if (i.mode === 'shim') {
      line = checkCrio(b.bin, layout, path.posix.dirname(recorded!));
    } else {
      const pluginDir = external ? undefined : path.posix.dirname(recorded!);
      const required = askedRequired(layout, i);
      line = b.containerd ? checkNri(b.containerd, layout, pluginDir, required) : checkCrioNri(b.bin, layout, pluginDir, required);
    }
    return ok(name, line.replace(/^checked: /, ''));
  } catch (err) {
    if (!(err instanceof EnvhookError)) throw err;
    return problem(name, err.message, err instanceof RuntimeReadFailed ? FIX_FILES : reinstall(node, i));
  }
}

/**
 * Whether this install was asked for --nri-required: as state.json records it. A state file from
 * before it was recorded: envhook's own lines still say so (its block in containerd's file, its
 * CRI-O drop-in); once those are gone the plugin check fails anyway.
 */
function askedRequired(layout: Layout, i: RecordedInstall): boolean {
  return i.record.nriRequired ?? requiredInFiles(layout, i);
}

function requiredInFiles(layout: Layout, i: RecordedInstall): boolean {
  const text = (f: string) => {
    try {
      return fs.readFileSync(layout.real(f), 'utf8');
    } catch {
      return '';
    }
  };
  const blocks = i.record.blocks.map((f) => {
    try {
      return splitBlock(text(f), f).block ?? '';
    } catch {
      return '';
    }
  });
  const own = Object.keys(i.record.files)
    .filter((f) => f.endsWith('.conf'))
    .map(text);
  return [...blocks, ...own].some((t) => /required_plugins/.test(t));
}

/** Podman reads hooks from the hooks_dir its containers.conf files set: it must hold envhook's, with both files. */
function podmanHooks(node: NodeView, i: RecordedInstall, layout: Layout): CheckResult {
  let dirs: string[];
  try {
    dirs = currentHooksDirs(layout, null);
  } catch (err) {
    if (!(err instanceof EnvhookError)) throw err;
    return problem('hooks', `podman: ${err.message}`, reinstall(node, i));
  }
  if (!dirs.includes(layout.podmanHooksDir))
    return problem(
      'hooks',
      `podman: hooks_dir as Podman's containers.conf files set it (${dirs.join(', ')}) does not hold ${layout.podmanHooksDir}`,
      reinstall(node, i),
    );
  return ok(
    'hooks',
    `podman: hooks_dir as Podman's containers.conf files set it holds ${layout.podmanHooksDir}, with ${Object.values(HOOK_FILES).join(' and ')}`,
  );
}
