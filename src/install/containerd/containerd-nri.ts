// `install --runtime containerd --mode nri`: `envhook nri` as a pre-installed NRI plugin, an
// executable `NN-envhook` in containerd's `plugin_path`. containerd starts it with the
// connection already open (NRI_PLUGIN_SOCKET), so no socket path or unit is needed, and starts
// it again whenever containerd itself starts. NRI is switched on only where the merged
// configuration has it off (containerd 1.7's default; containerd-nri-enable.ts); on 2.x, where
// it is on by default, no configuration is written at all.
import path from 'node:path';
import { EnvhookError } from '../../errors.ts';
import { absolute, type Layout } from '../layout.ts';
import type { BlockTarget, RuntimePlan } from '../targets.ts';
import { blockBody, blockFile, NRI_PLUGIN, switchNriOn } from './containerd-nri-enable.ts';
import type { KeyEdit } from '../key-edit.ts';
import { configDump, findContainerd, type ContainerdBinary } from './containerd-binary.ts';
import { missingBinary, pathFor } from '../../oci/runtime-binary.ts';
import { refuseUnloadedRoot } from '../config-read.ts';
import { readContainerdConfig, type ContainerdConfig } from './containerd-config.ts';
import type { ConfigFile } from './containerd-files.ts';
import { mergePlugins } from './containerd-merge.ts';
import { parseToml, table, tableAt, type Table } from '../toml.ts';
import { withBlock } from '../block.ts';
import { names, olderThan, refuseWithoutValidator, REQUIRED_PLUGIN, requiredNote, tomlList, withRequired } from '../nri-required.ts';
import { NRI_DEFAULT_LOG, NRI_DEFAULT_SOCKET, nriIndex, pluginWrapper, redialNote, type PluginFlags } from '../nri-plugin.ts';

/** containerd's own defaults for the NRI plugin's table. */
const NRI_DEFAULT_PLUGIN_PATH = '/opt/nri/plugins';

export interface ContainerdNriOptions {
  containerd?: string | undefined;
  dropIn?: string | undefined;
  /** --config is the file containerd's service starts it with. */
  serviceConfig?: boolean | undefined;
  /** The plugin's two-digit index (the NN of NN-envhook). */
  index?: string | undefined;
  /** Where the plugin's stderr goes (default NRI_DEFAULT_LOG). */
  nriLog?: string | undefined;
  /** Make envhook a required plugin of NRI's default validator (containerd 2.2 or later). */
  nriRequired?: boolean | undefined;
  /** Let install change an admin's `disable = true` in NRI's table to false. */
  enableNri?: boolean | undefined;
  /** The plugin runs elsewhere (a DaemonSet): NRI switched on, no plugin file (--external-plugin). */
  externalPlugin?: boolean | undefined;
  /** This install's previous edits (state.json): taken back before the files are read. */
  previousEdits?: KeyEdit[] | undefined;
  /** The plugin's settings given as flags (--cri-socket, --evict-unapplied, --metrics-address). */
  plugin?: PluginFlags | undefined;
}

/** containerd's CRI socket: `[grpc] address` as containerd merges its files (the last that sets it), else its default. */
function grpcAddress(files: ConfigFile[]): string {
  let address = CONTAINERD_GRPC_DEFAULT;
  for (const f of files) {
    const grpc = f.doc.grpc;
    if (grpc && typeof grpc === 'object' && typeof (grpc as Table).address === 'string') address = (grpc as Table).address as string;
  }
  return absolute(address, 'address of [grpc]');
}

/** containerd's default `[grpc] address`. */
const CONTAINERD_GRPC_DEFAULT = '/run/containerd/containerd.sock';

export function containerdNriPlan(layout: Layout, opts: ContainerdNriOptions): RuntimePlan {
  const index = nriIndex(opts.index);
  refuseUnloadedRoot(layout, opts.serviceConfig);
  const binary = findContainerd(opts.containerd, layout.root);
  refuseWithoutNri(binary);
  if (opts.nriRequired) refuseWithoutValidator('containerd', binary?.version);
  const dropIn = opts.dropIn === undefined ? undefined : absolute(opts.dropIn, '--drop-in');
  // the files as the admin wrote them: envhook's own change of a disable line taken back
  const config = readContainerdConfig(layout, { root: layout.config, binary, newFile: dropIn, edits: opts.previousEdits });
  const nri = config.readings.map((r) => ({ family: r.family, table: table(mergePlugins(r.files, r.family), NRI_PLUGIN) }));
  const pluginPaths = [
    ...new Set(nri.map((n) => (typeof n.table?.plugin_path === 'string' ? n.table.plugin_path : NRI_DEFAULT_PLUGIN_PATH))),
  ];
  if (pluginPaths.length > 1)
    throw new EnvhookError(
      `containerd 1.x and 2.x would read different NRI plugin_path values from these files: name the binary with --containerd PATH`,
    );
  const pluginDir = absolute(pluginPaths[0]!, `plugin_path of [plugins."${NRI_PLUGIN}"]`);
  const plugin = path.posix.join(pluginDir, `${index}-envhook`);
  const nriTable = nri[0]?.table;
  const socket = absolute(
    typeof nriTable?.socket_path === 'string' ? nriTable.socket_path : NRI_DEFAULT_SOCKET,
    `socket_path of [plugins."${NRI_PLUGIN}"]`,
  );
  const on = switchNriOn(config, dropIn, !!opts.enableNri);
  const blocks = on.block ? [on.block] : [];
  const written = on.block !== undefined || on.edits.length > 0;
  const notes = [on.note + (written || opts.nriRequired ? '' : ': no configuration written')];
  if (opts.nriRequired) {
    // containerd 2.2 or later: one reading, NRI on (off is refused by switchNriOn on 2.x without --enable-nri)
    const required = requiredBlock(config, dropIn);
    if (required) blocks.push(required);
    else
      notes.push(
        `envhook is already a required plugin of NRI's default validator in ${config.root} as containerd reads it: nothing written for --nri-required`,
      );
    notes.push(requiredNote('containerd'));
  }
  const external = !!opts.externalPlugin;
  notes.push(
    external
      ? `no plugin file (--external-plugin): envhook nri connects to ${socket} from elsewhere (the Helm chart's DaemonSet)`
      : `plugin ${plugin}: containerd starts it and hands it the connection; its log: ${opts.nriLog ?? NRI_DEFAULT_LOG}`,
  );
  // how the pre-installed plugin registers again: nothing of an external one's
  const noConnections = nriTable?.disable_connections === true;
  if (!external) notes.push(redialNote('containerd', socket, noConnections));
  const check = nriCheck(layout, binary, external ? undefined : pluginDir, !!opts.nriRequired);
  const cri = opts.plugin?.criSocket ?? grpcAddress(config.readings[0]!.files);
  if (!external) notes.push(`plugin evicts through ${cri}${opts.plugin?.criSocket ? ' (--cri-socket)' : " (containerd's grpc.address)"}`);
  const wrapper = pluginWrapper(layout, { socket, log: opts.nriLog ?? NRI_DEFAULT_LOG, ...opts.plugin, criSocket: cri });
  return {
    files: external ? [] : [{ file: plugin, content: wrapper, mode: 0o755 }],
    blocks,
    edits: on.edits,
    next: external
      ? blocks.length || on.edits.length
        ? ['restart containerd: systemctl restart containerd (containerd reads its NRI configuration when it starts)']
        : []
      : ['restart containerd: systemctl restart containerd (containerd starts its pre-installed NRI plugins when it starts)'],
    notes: [...notes, ...(check.notes ?? [])],
    ...(check.verify ? { verify: check.verify } : {}),
    ...(external || noConnections
      ? {}
      : { upgrade: { socket, configFiles: [...blocks.map((b) => b.file), ...on.edits.map((e) => e.file)] } }),
  };
}

/** The check, or the note saying why there is none. */
function nriCheck(
  layout: Layout,
  binary: ContainerdBinary | undefined,
  pluginDir: string | undefined,
  required: boolean,
): Pick<RuntimePlan, 'verify' | 'notes'> {
  if (binary) return { verify: () => checkNri(binary, layout, pluginDir, required) };
  return { notes: [`not checked with containerd: ${missingBinary('containerd', layout.root)} (--containerd PATH names one)`] };
}

function refuseWithoutNri(binary: ContainerdBinary | undefined): void {
  if (!binary) return;
  if (olderThan(binary.version, [1, 7])) {
    throw new EnvhookError(
      `containerd ${binary.version} has no NRI (containerd 1.7 or later has it): install the runtime handler instead (--mode shim)`,
    );
  }
}

const VALIDATOR = `[plugins."${NRI_PLUGIN}".default_validator]`;

/**
 * NRI's default validator on, with envhook among its required plugins: the union of the list in
 * force and "envhook". Undefined when the files already require envhook. containerd 2.x merges
 * files key by key, so the other validator settings stay as the admin set them; a list set in a
 * file read after envhook's would replace envhook's: refused.
 */
function requiredBlock(config: ContainerdConfig, dropIn: string | undefined): BlockTarget | undefined {
  const r = config.readings[0]!;
  const validator = (files: ConfigFile[]) => tableAt(mergePlugins(files, r.family), NRI_PLUGIN, 'default_validator');
  const current = validator(r.files);
  if (current?.enable === true && names(current.required_plugins).includes(REQUIRED_PLUGIN)) return undefined;
  const file = blockFile(config, dropIn);
  if (tableAt(file.doc, 'plugins', NRI_PLUGIN, 'default_validator')) {
    throw new EnvhookError(
      `${file.path} sets ${VALIDATOR}: add "${REQUIRED_PLUGIN}" to its required_plugins there (envhook does not edit the admin's lines), or name a file containerd reads after it with --drop-in`,
    );
  }
  const list = withRequired(names(current?.required_plugins));
  const body = blockBody(config, file, [VALIDATOR, '  enable = true', `  required_plugins = ${tomlList(list)}`]);
  const doc = parseToml(withBlock(file.text, body, file.path), file.path);
  const files = r.files.map((f) => (f === file ? { ...f, doc } : f));
  const after = validator(files);
  if (after?.enable !== true || !names(after.required_plugins).includes(REQUIRED_PLUGIN)) {
    const later = files.slice(files.indexOf(file) + 1).findLast((f) => tableAt(f.doc, 'plugins', NRI_PLUGIN, 'default_validator'));
    throw new EnvhookError(
      `${later?.path ?? 'a later file'} sets ${VALIDATOR} and containerd reads it after ${file.path}: envhook's required_plugins would be replaced; name a file containerd reads after it with --drop-in`,
    );
  }
  return {
    file: file.path,
    body,
    mode: 0o644,
    note: `envhook's block goes here: NRI's default validator on, required_plugins ${tomlList(list)}`,
  };
}

/** containerd's own reading after install: NRI on, reading plugins from the directory used (none for an external plugin), and requiring envhook. */
export function checkNri(binary: ContainerdBinary, layout: Layout, pluginDir: string | undefined, required: boolean): string {
  const dump: Table = configDump(binary, pathFor(binary, layout.root, layout.config), layout.root);
  const nri = tableAt(dump, 'plugins', NRI_PLUGIN);
  const problems: string[] = [];
  if (!nri) problems.push(`no [plugins."${NRI_PLUGIN}"]`);
  else {
    if (nri.disable !== false) problems.push('NRI is disabled');
    if (pluginDir !== undefined && nri.plugin_path !== pluginDir) problems.push(`plugin_path is not ${pluginDir}`);
    const validator = table(nri, 'default_validator');
    if (required && validator?.enable !== true) problems.push("NRI's default validator is off");
    if (required && !names(validator?.required_plugins).includes(REQUIRED_PLUGIN))
      problems.push(`required_plugins does not hold "${REQUIRED_PLUGIN}"`);
  }
  if (problems.length) throw new EnvhookError(`containerd ${binary.version} config dump of ${layout.config}: ${problems.join('; ')}`);
  const plugins = pluginDir === undefined ? ' for an external plugin' : `, with plugins from ${pluginDir}`;
  return `checked: containerd ${binary.version} config dump of ${layout.config} shows NRI on${plugins}${required ? `, "${REQUIRED_PLUGIN}" required` : ''}`;
}
