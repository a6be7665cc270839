// `install --runtime containerd --mode nri`: `envhook nri` as a pre-installed NRI plugin, an
// executable `NN-envhook` in containerd's `plugin_path`. containerd starts it with the
// connection already open (NRI_PLUGIN_SOCKET), so no socket path or unit is needed, and starts
// it again whenever containerd itself starts. NRI is switched on only where the merged
// configuration has it off (containerd 1.7's default); on 2.x, where it is on by default, no
// configuration is written at all.
import path from 'node:path';
import { EnvhookError } from '../errors.ts';
import { absolute, type Layout } from './layout.ts';
import type { BlockTarget, RuntimePlan } from './targets.ts';
import { configDump, findContainerd, type ContainerdBinary } from './containerd-binary.ts';
import { readContainerdConfig, type ContainerdConfig } from './containerd-config.ts';
import { mergePlugins } from './containerd-merge.ts';
import { parseToml, table, tableAt, type Table } from './toml.ts';
import { withBlock } from './block.ts';

export const NRI_PLUGIN = 'io.containerd.nri.v1.nri';
/** containerd's own defaults for the NRI plugin's table. */
export const NRI_DEFAULT_PLUGIN_PATH = '/opt/nri/plugins';

export interface ContainerdNriOptions {
  containerd?: string | undefined;
  dropIn?: string | undefined;
  /** The plugin's two-digit index (the NN of NN-envhook). */
  index?: string | undefined;
}

export function nriIndex(index: string | undefined): string {
  const i = index ?? '50';
  if (!/^[0-9]{2}$/.test(i)) throw new EnvhookError(`--index must be two digits (00-99), as NRI names pre-installed plugins`);
  return i;
}

export function containerdNriPlan(layout: Layout, opts: ContainerdNriOptions): RuntimePlan {
  const index = nriIndex(opts.index);
  const binary = findContainerd(opts.containerd);
  refuseWithoutNri(binary);
  const dropIn = opts.dropIn === undefined ? undefined : absolute(opts.dropIn, '--drop-in');
  const config = readContainerdConfig(layout, { root: layout.config, binary, newFile: dropIn });
  const nri = config.readings.map((r) => ({ family: r.family, table: table(mergePlugins(r.files, r.family), NRI_PLUGIN) }));
  const pluginPaths = [...new Set(nri.map((n) => (typeof n.table?.plugin_path === 'string' ? n.table.plugin_path : NRI_DEFAULT_PLUGIN_PATH)))];
  if (pluginPaths.length > 1) throw new EnvhookError(`containerd 1.x and 2.x would read different NRI plugin_path values from these files: name the binary with --containerd PATH`);
  const pluginDir = absolute(pluginPaths[0]!, `plugin_path of [plugins."${NRI_PLUGIN}"]`);
  const plugin = path.posix.join(pluginDir, `${index}-envhook`);
  // 1.x (1.7) ships NRI off, 2.x on; an explicit `disable` in force decides either way
  const off = nri.some((n) => (n.table?.disable ?? n.family === '1.x') !== false);
  const blocks = off ? [enableBlock(config, dropIn)] : [];
  return {
    files: [{ file: plugin, content: pluginWrapper(layout), mode: 0o755 }],
    blocks,
    next: ['restart containerd: systemctl restart containerd (containerd starts its pre-installed NRI plugins when it starts)'],
    notes: [off ? `NRI is off in ${config.root} as containerd reads it: switched on` : `NRI is on in ${config.root} as containerd reads it (containerd 2.x's default): no configuration written`, `plugin ${plugin}: containerd starts it and hands it the connection`],
    ...(binary ? { verify: () => checkNri(binary, layout, pluginDir) } : {}),
  };
}

function refuseWithoutNri(binary: ContainerdBinary | undefined): void {
  if (!binary) return;
  const [major, minor] = binary.version.split('.').map((n) => parseInt(n, 10));
  if (major! < 1 || (major === 1 && minor! < 7)) {
    throw new EnvhookError(`containerd ${binary.version} has no NRI (containerd 1.7 or later has it): install the runtime handler instead (--mode shim)`);
  }
}

/** `disable = false` in a file of its own table; an admin's NRI table is never edited. */
function enableBlock(config: ContainerdConfig, dropIn: string | undefined): BlockTarget {
  for (const r of config.readings) {
    const setter = r.files.find((f) => tableAt(f.doc, 'plugins', NRI_PLUGIN));
    if (setter) throw new EnvhookError(`${setter.path} sets [plugins."${NRI_PLUGIN}"] and NRI is off as containerd reads it: set disable = false there (envhook does not edit the admin's lines)`);
  }
  const files = config.readings[0]!.files;
  const file = dropIn === undefined ? files[0]! : files.find((f) => f.path === dropIn);
  if (!file) throw new EnvhookError(`${dropIn} is not read by containerd: the imports of ${config.root} (and of the files it imports) do not name it`);
  const newFile = !file.exists || Object.keys(file.doc).length === 0;
  const lines = [...(newFile ? [`version = ${config.version}`, ''] : []), `[plugins.${JSON.stringify(NRI_PLUGIN)}]`, '  disable = false'];
  const body = lines.join('\n') + '\n';
  parseToml(withBlock(file.text, body, file.path), `${file.path} with envhook's block`);
  return { file: file.path, body, mode: 0o644, note: `envhook's block goes here: no file sets [plugins."${NRI_PLUGIN}"], so this one table switches NRI on` };
}

/** The executable containerd starts: envhook nri with the settings of /etc/envhook/config.json. */
export function pluginWrapper(layout: Layout): Buffer {
  return Buffer.from(
    [
      '#!/bin/sh',
      '# envhook as a pre-installed NRI plugin (written by envhook install; removed by envhook uninstall).',
      '# The runtime starts it with the connection as fd 3 (NRI_PLUGIN_SOCKET) and no PATH.',
      `exec ${shQuote(layout.bin)} nri`,
      '',
    ].join('\n'),
  );
}

function shQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** containerd's own reading after install: NRI on, reading plugins from the directory used. */
function checkNri(binary: ContainerdBinary, layout: Layout, pluginDir: string): string {
  const dump: Table = configDump(binary, layout.real(layout.config), layout.root);
  const nri = tableAt(dump, 'plugins', NRI_PLUGIN);
  const problems: string[] = [];
  if (!nri) problems.push(`no [plugins."${NRI_PLUGIN}"]`);
  else {
    if (nri.disable !== false) problems.push('NRI is disabled');
    if (nri.plugin_path !== pluginDir) problems.push(`plugin_path is not ${pluginDir}`);
  }
  if (problems.length) throw new EnvhookError(`containerd ${binary.version} config dump of ${layout.config}: ${problems.join('; ')}`);
  return `checked: containerd ${binary.version} config dump of ${layout.config} shows NRI on, with plugins from ${pluginDir}`;
}
