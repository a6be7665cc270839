// containerd: a runtime handler `envhook` (io.containerd.runc.v2 with BinaryName = the front,
// pod_annotations = envhook.io/*) appended to config.toml as a delimited block. The admin's
// text is never re-serialised; smol-toml only reads it (version, existing handler, the default
// runtime's options) and checks that the result still parses.
import { parse, stringify, TomlError } from 'smol-toml';
import { EnvhookError } from '../errors.ts';
import { splitBlock, withBlock } from './block.ts';
import { HANDLER, type Layout } from './layout.ts';
import type { BlockTarget } from './targets.ts';

type Table = Record<string, unknown>;
const PLUGIN: Record<2 | 3, string> = { 2: 'io.containerd.grpc.v1.cri', 3: 'io.containerd.cri.v1.runtime' };

export function parseToml(text: string, file: string): Table {
  try {
    return parse(text) as Table;
  } catch (cause) {
    // smol-toml's message quotes the file: report the position only
    const at = cause instanceof TomlError ? ` (line ${cause.line}, column ${cause.column})` : '';
    throw new EnvhookError(`${file} is not valid TOML${at}`, { cause: new Error('TOML syntax error') });
  }
}

export function containerdBlock(layout: Layout, current: string | undefined): BlockTarget {
  const file = layout.config;
  const { rest } = splitBlock(current ?? '', file);
  const doc = parseToml(rest, file);
  const version = configVersion(doc, file);
  const plugin = PLUGIN[version];
  const prefix = `plugins.${JSON.stringify(plugin)}.containerd.runtimes`;
  const cri = table(table(table(doc, 'plugins'), plugin), 'containerd');
  const runtimes = cri?.runtimes as Table | undefined;
  if (runtimes && HANDLER in runtimes) {
    throw new EnvhookError(`${file} already defines the runtime handler "${HANDLER}" outside envhook's block: remove it or install with --config`);
  }
  const lines: string[] = [];
  if (doc.version === undefined) lines.push('version = 2', '');
  const defaultName = typeof cri?.default_runtime_name === 'string' ? cri.default_runtime_name : 'runc';
  const defaultRuntime = runtimes?.[defaultName] as Table | undefined;
  if (!runtimes) {
    // containerd replaces its built-in runtimes map with the file's: keep the default runc
    lines.push('# containerd drops its built-in runc handler once the file names any runtime: restate it.');
    lines.push(`[${prefix}.runc]`, '  runtime_type = "io.containerd.runc.v2"', '');
  }
  lines.push(`[${prefix}.${HANDLER}]`, '  runtime_type = "io.containerd.runc.v2"', '  pod_annotations = ["envhook.io/*"]');
  lines.push(`[${prefix}.${HANDLER}.options]`);
  for (const [k, v] of Object.entries(inheritedOptions(defaultRuntime))) lines.push(`  ${stringify({ [k]: v }).trim()}`);
  lines.push(`  BinaryName = ${JSON.stringify(layout.front)}`);
  const body = lines.join('\n') + '\n';
  const result = withBlock(rest, body, file);
  const check = parseToml(result, `${file} with envhook's block`);
  if (!(table(table(table(table(table(check, 'plugins'), plugin), 'containerd'), 'runtimes'), HANDLER))) {
    throw new EnvhookError(`${file}: the runtime handler does not appear after adding envhook's block`);
  }
  return { file, body, mode: 0o644 };
}

/** Version 2 (containerd 1.x, 2.x) or 3 (2.x); an empty file is treated as a new version 2 file. */
export function configVersion(doc: Table, file: string): 2 | 3 {
  const v = doc.version;
  if (v === 2 || v === 3) return v;
  if (v === undefined && Object.keys(doc).length === 0) return 2;
  if (v === undefined || v === 1) {
    throw new EnvhookError(`${file} is a version 1 config (no "version = 2" line): migrate it (containerd config migrate) first`);
  }
  throw new EnvhookError(`${file}: unsupported config version`);
}

/**
 * The default runc handler's scalar options (SystemdCgroup above all: the handler must use the
 * kubelet's cgroup driver), so pods behave the same under envhook.
 */
function inheritedOptions(runtime: Table | undefined): Table {
  const out: Table = {};
  if (!runtime || (runtime.runtime_type ?? 'io.containerd.runc.v2') !== 'io.containerd.runc.v2') return out;
  const options = table(runtime, 'options');
  for (const [k, v] of Object.entries(options ?? {})) {
    if (k === 'BinaryName' || v === null || typeof v === 'object') continue;
    out[k] = v;
  }
  return out;
}

function table(t: Table | undefined, key: string): Table | undefined {
  const v = t?.[key];
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Table) : undefined;
}
