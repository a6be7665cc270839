// `install --runtime crio --mode nri`: `envhook nri` as a pre-installed NRI plugin in CRI-O's
// `nri_plugin_dir`, and a crio.conf.d drop-in with `[crio.nri] enable_nri = true` (NRI is off
// before CRI-O 1.30 and on from it; the drop-in is harmless there). CRI-O reads crio.conf, then
// the drop-ins in name order, a later value replacing an earlier one: the plugin directory in
// force is taken that way, and a later drop-in that turns NRI off again is refused.
import path from 'node:path';
import { EnvhookError } from '../../errors.ts';
import { absolute, type Layout } from '../layout.ts';
import type { RuntimePlan } from '../targets.ts';
import { tableAt, type Table } from '../toml.ts';
import { CRIO_MAIN_CONFIG, crioConfigDump, nodeCrio } from './crio-check.ts';
import { readCrioFiles } from './crio-files.ts';
import { names, refuseWithoutValidator, REQUIRED_PLUGIN, requiredNote, tomlList, withRequired } from '../nri-required.ts';
import { NRI_DEFAULT_LOG, NRI_DEFAULT_SOCKET, pluginWrapper, redialNote, type PluginFlags } from '../nri-plugin.ts';
import { missingBinary, type RuntimeBinary } from '../../oci/runtime-binary.ts';

export const CRIO_NRI_DROP_IN = '/etc/crio/crio.conf.d/50-envhook-nri.conf';
const NRI_DEFAULT_PLUGIN_DIR = '/opt/nri/plugins';
const VALIDATOR = 'crio.nri.default_validator';

/** envhook's drop-in; with `required`, NRI's default validator on, requiring those plugins. */
export function crioNriDropIn(required?: string[], external = false): string {
  return [
    '# Written by envhook install; removed by envhook uninstall.',
    `# NRI on (CRI-O's default from 1.30, off before), for envhook's ${external ? 'external' : 'pre-installed'} NRI plugin.`,
    '[crio.nri]',
    'enable_nri = true',
    ...(required
      ? [
          '',
          "# envhook a required plugin of NRI's default validator (CRI-O 1.34 or later): no container is created while it is not connected.",
          `[${VALIDATOR}]`,
          'nri_enable_default_validator = true',
          `nri_validator_required_plugins = ${tomlList(required)}`,
        ]
      : []),
    '',
  ].join('\n');
}

export function crioNriPlan(
  layout: Layout,
  index: string,
  crio?: string,
  required = false,
  nriLog = NRI_DEFAULT_LOG,
  external = false,
  flags: PluginFlags = {},
): RuntimePlan {
  const bin = nodeCrio(crio, layout);
  if (required) refuseWithoutValidator('crio', bin?.version);
  const files = readCrioFiles(layout);
  let pluginDir = NRI_DEFAULT_PLUGIN_DIR;
  let socket = NRI_DEFAULT_SOCKET;
  let noConnections = false;
  // CRI-O's CRI socket: [crio.api] listen, the last file that sets it (CRI-O's default otherwise)
  let listen = '/var/run/crio/crio.sock';
  // each file's [crio.nri.default_validator], in CRI-O's order, and whether CRI-O reads it after envhook's
  const validators: { file: string; after: boolean; table: Table }[] = [];
  for (const { file, doc } of files) {
    const nri = tableAt(doc, 'crio', 'nri');
    if (typeof nri?.nri_plugin_dir === 'string') pluginDir = nri.nri_plugin_dir;
    if (typeof nri?.nri_listen === 'string') socket = nri.nri_listen;
    if (typeof nri?.nri_disable_connections === 'boolean') noConnections = nri.nri_disable_connections;
    const api = tableAt(doc, 'crio', 'api');
    if (typeof api?.listen === 'string') listen = api.listen;
    const after = file !== CRIO_MAIN_CONFIG && walksBefore(layout.config, file);
    if (after && nri?.enable_nri === false) {
      throw new EnvhookError(
        `${file} sets enable_nri = false and CRI-O reads it after ${layout.config}: NRI would stay off; remove that line or name a later file with --config`,
      );
    }
    const v = tableAt(nri, 'default_validator');
    if (v && file !== layout.config) validators.push({ file, after, table: v });
  }
  pluginDir = absolute(pluginDir, 'nri_plugin_dir of [crio.nri]');
  const plugin = path.posix.join(pluginDir, `${index}-envhook`);
  socket = absolute(socket, 'nri_listen of [crio.nri]');
  const notes = [
    external
      ? `no plugin file (--external-plugin): envhook nri connects to ${socket} from elsewhere (the Helm chart's DaemonSet)`
      : `plugin ${plugin}: CRI-O starts it and hands it the connection; its log: ${nriLog}`,
    ...(external ? [] : [redialNote('CRI-O', socket, noConnections)]),
  ];
  const list = required ? requiredList(layout, validators) : undefined;
  if (required)
    notes.push(
      ...(list
        ? []
        : [`envhook is already a required plugin of NRI's default validator as CRI-O reads its files: nothing written for --nri-required`]),
      requiredNote('CRI-O'),
    );
  if (!bin) notes.push(`not checked with CRI-O: ${missingBinary('crio', layout.root)} (--crio PATH names one)`);
  const cri = flags.criSocket ?? absolute(listen, 'listen of [crio.api]');
  if (!external) notes.push(`plugin evicts through ${cri}${flags.criSocket ? ' (--cri-socket)' : " (CRI-O's listen)"}`);
  return {
    files: [
      ...(external
        ? []
        : [{ file: plugin, content: pluginWrapper(layout, { socket, log: nriLog, ...flags, criSocket: cri }), mode: 0o755 }]),
      { file: layout.config, content: Buffer.from(crioNriDropIn(list, external)), mode: 0o644 },
    ],
    blocks: [],
    // a reload (SIGHUP) does not start NRI or its plugins
    next: [
      external
        ? 'restart CRI-O: systemctl restart crio (CRI-O reads its NRI configuration when it starts; a reload does not)'
        : 'restart CRI-O: systemctl restart crio (CRI-O starts its pre-installed NRI plugins when it starts; a reload does not)',
    ],
    notes,
    ...(bin ? { verify: () => checkCrioNri(bin, layout, external ? undefined : pluginDir, required) } : {}),
    ...(external || noConnections ? {} : { upgrade: { socket, configFiles: [layout.config] } }),
  };
}

const requires = (v: Table) => v.nri_enable_default_validator === true && names(v.nri_validator_required_plugins).includes(REQUIRED_PLUGIN);

/**
 * The plugins envhook's drop-in requires: the list in force, then "envhook"; undefined when the
 * files already require it. CRI-O sets key by key, a list replaced whole: a file read after
 * envhook's that would replace its list or turn the validator off is refused.
 */
function requiredList(layout: Layout, validators: { file: string; after: boolean; table: Table }[]): string[] | undefined {
  const merged = Object.assign({}, ...validators.map((v) => v.table)) as Table;
  if (requires(merged)) return undefined;
  const list = withRequired(names(merged.nri_validator_required_plugins));
  const ours: Table = { nri_enable_default_validator: true, nri_validator_required_plugins: list };
  const later = validators.filter((v) => v.after);
  if (!requires(Object.assign({}, ours, ...later.map((v) => v.table)))) {
    throw new EnvhookError(
      `${later.at(-1)!.file} sets [${VALIDATOR}] and CRI-O reads it after ${layout.config}: envhook's nri_validator_required_plugins would be replaced; name a later file with --config`,
    );
  }
  return list;
}

/**
 * `crio config`, options equal to CRI-O's default read from its commented lines (crio-render.ts).
 * The validator too: CRI-O 1.34 to 1.36 print it commented whatever the files set, with the
 * values CRI-O applies.
 */
/** Whether filepath.Walk reaches `a` before `b` (both under the drop-in directory): the first differing path element decides. */
function walksBefore(a: string, b: string): boolean {
  const [x, y] = [a.split('/'), b.split('/')];
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i]! < y[i]!;
  return x.length < y.length;
}

export function checkCrioNri(bin: RuntimeBinary, layout: Layout, pluginDir: string | undefined, required: boolean): string {
  const nri = tableAt(crioConfigDump(bin, layout), 'crio', 'nri');
  if (!nri) throw new EnvhookError('crio config: no [crio.nri] table: CRI-O 1.26 or later has NRI');
  const problems: string[] = [];
  if (nri?.enable_nri !== true) problems.push('enable_nri is not true');
  if (pluginDir !== undefined && nri?.nri_plugin_dir !== pluginDir) problems.push(`nri_plugin_dir is not ${pluginDir}`);
  if (required && !requires(tableAt(nri, 'default_validator') ?? {})) problems.push(`[${VALIDATOR}] does not require "${REQUIRED_PLUGIN}"`);
  if (problems.length) throw new EnvhookError(`crio config: ${problems.join('; ')}`);
  const plugins = pluginDir === undefined ? ' for an external plugin' : `, with plugins from ${pluginDir}`;
  return `checked: crio config shows NRI on${plugins}${required ? `, "${REQUIRED_PLUGIN}" required` : ''}`;
}
