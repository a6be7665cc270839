// How containerd merges the `plugins` tables of the files it reads (in load order), and which CRI
// runtime table is in force afterwards. Measured with both binaries' `config dump`:
//   1.x: a file that sets a plugin replaces that plugin's whole table from every earlier file
//        (mergeConfig assigns plugins by ID);
//   2.x: tables merge key by key at every depth; a later file's value (scalar or array, even
//        `false` or '') replaces an earlier one. Version 2 CRI sections are moved to the version
//        3 name afterwards, but only when no file sets the version 3 table: otherwise the version
//        2 CRI settings are dropped without a word. Not the whole section: in version 3 the
//        same plugin ID is the CRI server, whose own keys (streaming, TLS: `config default`
//        writes them) stay in force; only the other keys (`containerd`, `registry`...) go.
import type { ConfigFile, Family } from './containerd-files.ts';
import { table, tableAt, type Table } from '../toml.ts';

export const CRI_V2 = 'io.containerd.grpc.v1.cri';
export const CRI_V3 = 'io.containerd.cri.v1.runtime';

/** The plugin whose table holds the CRI runtimes in a file of `version` (4 keeps 3's names). */
export function criPlugin(version: number): string {
  return version >= 3 ? CRI_V3 : CRI_V2;
}

export function mergePlugins(files: ConfigFile[], family: Family): Table {
  let out: Table = {};
  for (const f of files) {
    const plugins = table(f.doc, 'plugins');
    if (!plugins) continue;
    out = family === '1.x' ? { ...out, ...plugins } : deepMerge(out, plugins);
  }
  return out;
}

function deepMerge(to: Table, from: Table): Table {
  const out: Table = { ...to };
  for (const [k, v] of Object.entries(from)) {
    const a = table(out, k);
    const b = table(from, k);
    out[k] = a && b ? deepMerge(a, b) : v;
  }
  return out;
}

export interface EffectiveCri {
  /** The plugin ID as the merged config names it. */
  plugin: string;
  /** The CRI runtime plugin's table in force, or undefined when no file sets it. */
  cri: Table | undefined;
  /** Version 2 CRI settings containerd 2.x drops (a version 3 table is set elsewhere): each file and its keys. */
  dropped: { path: string; keys: string[] }[];
}

/** `serverKeys`: the keys containerd 2.x reads in [plugins."io.containerd.grpc.v1.cri"] (criServerKeys). */
export function effectiveCri(files: ConfigFile[], family: Family, serverKeys: ReadonlySet<string> = new Set()): EffectiveCri {
  const merged = mergePlugins(files, family);
  if (family === '1.x') return { plugin: CRI_V2, cri: table(merged, CRI_V2), dropped: [] };
  if (table(merged, CRI_V3)) {
    const dropped = files
      .map((f) => ({ path: f.path, keys: Object.keys(tableAt(f.doc, 'plugins', CRI_V2) ?? {}).filter((k) => !serverKeys.has(k)) }))
      .filter((d) => d.keys.length > 0);
    return { plugin: CRI_V3, cri: table(merged, CRI_V3), dropped };
  }
  return { plugin: CRI_V3, cri: table(merged, CRI_V2), dropped: [] };
}

/** Files that set the CRI runtime plugin's table (either name). */
export function criSetters(files: ConfigFile[], plugin: string): ConfigFile[] {
  return files.filter((f) => tableAt(f.doc, 'plugins', plugin) !== undefined);
}

/** The default runtime's handler table in a CRI table. */
export function defaultRuntime(cri: Table | undefined): { name: string; runtime: Table | undefined } {
  const c = table(cri, 'containerd');
  const name = typeof c?.default_runtime_name === 'string' ? c.default_runtime_name : 'runc';
  return { name, runtime: tableAt(c, 'runtimes', name) };
}
