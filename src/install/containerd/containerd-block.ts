// containerd: a runtime handler `envhook` (io.containerd.runc.v2 with BinaryName = the front,
// pod_annotations = envhook.io/*) appended as a delimited block to the file placement chose
// (containerd-place.ts), in the root file's config version. The admin's text is never
// re-serialised; smol-toml only reads it and checks that the result still parses.
import { stringify } from 'smol-toml';
import { EnvhookError } from '../../errors.ts';
import { withBlock } from '../block.ts';
import { HANDLER, type Layout } from '../layout.ts';
import type { Placement } from './containerd-place.ts';
import type { BlockTarget } from '../targets.ts';
import { parseToml, table, tableAt, type Table } from '../toml.ts';

export function containerdBlock(layout: Layout, place: Placement): BlockTarget {
  const file = place.file.path;
  const prefix = `plugins.${JSON.stringify(place.plugin)}.containerd.runtimes`;
  const lines: string[] = [];
  if (place.versionLine) lines.push(`version = ${place.version}`, '');
  if (place.restateRunc) {
    lines.push('# containerd 1.x drops its built-in runc handler once the CRI table names any runtime: restate it.');
    lines.push(`[${prefix}.runc]`, '  runtime_type = "io.containerd.runc.v2"', '');
  }
  lines.push(`[${prefix}.${HANDLER}]`, '  runtime_type = "io.containerd.runc.v2"', '  pod_annotations = ["envhook.io/*"]');
  lines.push(`[${prefix}.${HANDLER}.options]`);
  for (const [k, v] of Object.entries(inheritedOptions(place.defaultRuntime))) lines.push(`  ${stringify({ [k]: v }).trim()}`);
  lines.push(`  BinaryName = ${JSON.stringify(layout.front)}`);
  const body = lines.join('\n') + '\n';
  const check = parseToml(withBlock(place.file.text, body, file), `${file} with envhook's block`);
  if (!tableAt(check, 'plugins', place.plugin, 'containerd', 'runtimes', HANDLER)) {
    throw new EnvhookError(`${file}: the runtime handler does not appear after adding envhook's block`);
  }
  return { file, body, mode: 0o644, note: `envhook's block goes here: ${place.reason}` };
}

/**
 * The default runc handler's scalar options in force (SystemdCgroup above all: the handler must
 * use the kubelet's cgroup driver), so pods behave the same under envhook.
 */
export function inheritedOptions(runtime: Table | undefined): Table {
  const out: Table = {};
  if (!runtime || (runtime.runtime_type ?? 'io.containerd.runc.v2') !== 'io.containerd.runc.v2') return out;
  for (const [k, v] of Object.entries(table(runtime, 'options') ?? {})) {
    if (k === 'BinaryName' || v === null || typeof v === 'object') continue;
    out[k] = v;
  }
  return out;
}
