// Where envhook's block goes so that containerd keeps it, and why (printed with the change):
//   1.x: the last file that sets the CRI plugin replaces that table of every file before it, so
//        the block goes into that file (the root file when none sets it). A drop-in that is not
//        that file would lose the block, or wipe the admin's CRI settings: refused.
//   2.x: files merge table by table, so the root file keeps the block unless a file sets the
//        handler itself (refused); a drop-in named with --drop-in works the same, once the root
//        imports it and it is of the root's version.
// With no binary to say which line reads a version 2 layout, both readings must agree.
import { EnvhookError } from '../../errors.ts';
import type { ConfigFile } from './containerd-files.ts';
import { dropInNotRead, type ContainerdConfig, type Reading } from './containerd-config.ts';
import { CRI_V2, CRI_V3, criPlugin, criSetters, defaultRuntime, effectiveCri } from './containerd-merge.ts';
import { HANDLER } from '../layout.ts';
import { criServerKeys } from './containerd-binary.ts';
import { tableAt, type Table } from '../toml.ts';

export interface Placement {
  file: ConfigFile;
  /** The plugin the block names: the one of the root file's version. */
  plugin: string;
  version: number;
  /** A new or empty file gets the version line. */
  versionLine: boolean;
  /** The default runtime's name and its runc options in force, to copy into the handler. */
  defaultName: string;
  defaultRuntime: Table | undefined;
  /** containerd 1.x drops its built-in runc once the CRI table names any runtime: restate it. */
  restateRunc: boolean;
  reason: string;
}

export function placeBlock(config: ContainerdConfig, dropIn?: string): Placement {
  const [one, two] = config.readings;
  const first = placeIn(one!, config, dropIn);
  if (!two) return first;
  // no binary to ask (a version 2 layout): the 1.x placement, which 2.x must accept as a drop-in
  const second = placeIn(two, config, first.file.path);
  if (JSON.stringify(second.defaultRuntime?.options ?? null) !== JSON.stringify(first.defaultRuntime?.options ?? null)) {
    throw new EnvhookError(
      `containerd 1.x and 2.x would run the default runtime "${first.defaultName}" with different options from these files (1.x takes the CRI table of ${first.file.path} alone): name the binary with --containerd PATH`,
    );
  }
  return { ...first, reason: `${first.reason} (read as containerd 1.x and 2.x would: no containerd binary to ask)` };
}

function placeIn(r: Reading, config: ContainerdConfig, dropIn: string | undefined): Placement {
  const { files, family } = r;
  const root = files[0]!;
  for (const f of files) {
    for (const p of [CRI_V2, CRI_V3]) {
      if (tableAt(f.doc, 'plugins', p, 'containerd', 'runtimes', HANDLER)) {
        throw new EnvhookError(
          `${f.path} already defines the runtime handler "${HANDLER}" outside envhook's block: remove it, or name another file with --config`,
        );
      }
    }
  }
  const target = dropIn === undefined ? undefined : files.find((f) => f.path === dropIn);
  if (dropIn !== undefined && !target) {
    throw dropInNotRead(dropIn!, config.root);
  }
  const version = config.version;
  const base = (file: ConfigFile) => ({
    file,
    plugin: family === '1.x' ? CRI_V2 : criPlugin(version),
    version,
    versionLine: !file.exists || Object.keys(file.doc).length === 0,
  });

  if (family === '1.x') {
    const setters = criSetters(files, CRI_V2);
    const last = setters.at(-1);
    const file = target ?? last ?? root;
    if (last && file !== last) {
      const before = files.indexOf(file) < files.indexOf(last);
      throw new EnvhookError(
        before
          ? `${file.path} is read before ${last.path}, whose [plugins."${CRI_V2}"] replaces that whole table on containerd 1.x: envhook's handler would be lost; install without --drop-in (the block then goes into ${last.path})`
          : `envhook's block in ${file.path} would replace the whole [plugins."${CRI_V2}"] table of ${last.path} on containerd 1.x (its CRI settings lost); install without --drop-in (the block then goes into ${last.path})`,
      );
    }
    const cri = file === last ? tableAt(file.doc, 'plugins', CRI_V2) : undefined;
    const reason = !last
      ? `no file sets [plugins."${CRI_V2}"]; containerd 1.x takes that table from the last file that sets it`
      : file === root
        ? `${root.path} sets [plugins."${CRI_V2}"] and no imported file does; containerd 1.x takes that table from the last file that sets it`
        : `${file.path} is the last file that sets [plugins."${CRI_V2}"], and containerd 1.x takes that whole table from it (the CRI settings of the files before it are not in force)`;
    return { ...base(file), ...runtimeOf(cri), restateRunc: !tableAt(cri, 'containerd', 'runtimes'), reason };
  }

  if (version === 2 && criSetters(files, CRI_V3).length > 0) {
    const v3 = criSetters(files, CRI_V3)[0]!.path;
    throw new EnvhookError(
      `${v3} sets [plugins.'${CRI_V3}'] while ${root.path} is version 2: containerd 2.x then drops every version 2 CRI section, envhook's included; migrate the root file (containerd config migrate) first`,
    );
  }
  const file = target ?? root;
  if (file !== root && file.exists && file.version !== 0 && file.version !== version) {
    throw new EnvhookError(
      `${file.path} is a version ${file.version} file and ${root.path} version ${version}: envhook writes in the root file's version; name a file of that version (or a new one) with --drop-in`,
    );
  }
  const { cri, dropped } = effectiveCri(files, family, criServerKeys(config.binary));
  const droppedNote = dropped.length
    ? `; the version 2 CRI settings of ${dropped.map((d) => `${d.path} (${d.keys.join(', ')})`).join(', ')} are not in force (containerd 2.x drops them)`
    : '';
  const reason =
    file === root
      ? `containerd 2.x merges imported files table by table and none sets the handler "${HANDLER}", so the root file's block stands${droppedNote}`
      : `${file.path} is imported by ${file.importedBy}; containerd 2.x merges files table by table and none sets the handler "${HANDLER}"${droppedNote}`;
  return { ...base(file), ...runtimeOf(cri), restateRunc: false, reason };
}

function runtimeOf(cri: Table | undefined): { defaultName: string; defaultRuntime: Table | undefined } {
  const { name, runtime } = defaultRuntime(cri);
  return { defaultName: name, defaultRuntime: runtime };
}
