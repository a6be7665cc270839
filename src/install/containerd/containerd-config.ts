// containerd's configuration as containerd reads it: the root file and its imports in merge
// order, the version to write, and which containerd line(s) will read it. Shared by every
// install mode that registers something with containerd (the runtime handler; NRI later).
import fs from 'node:fs';
import path from 'node:path';
import { EnvhookError } from '../../errors.ts';
import type { Layout } from '../layout.ts';
import { readHost } from '../fsops.ts';
import { loadOrder, type ConfigFile, type Family, type HostReader } from './containerd-files.ts';
import { defaultConfigVersion, type ContainerdBinary } from './containerd-binary.ts';
import { revertEdit, type KeyEdit } from '../key-edit.ts';

export interface Reading {
  family: Family;
  /** Merge order, the root first. */
  files: ConfigFile[];
}

export interface ContainerdConfig {
  /** Host path of the root file (`containerd --config`). */
  root: string;
  /** The version envhook writes in: the root file's own. */
  version: number;
  /** Where `version` came from, for the admin. */
  versionFrom: string;
  /** One reading per containerd line that may read these files (both when no binary says which). */
  readings: Reading[];
  binary: ContainerdBinary | undefined;
}

export interface ReadOptions {
  root: string;
  binary?: ContainerdBinary | undefined;
  /** A host file read as if it existed, empty (a drop-in install is about to create). */
  newFile?: string | undefined;
  /** envhook's own edits of admin lines, taken back as the files are read (the admin's files as they were). */
  edits?: KeyEdit[] | undefined;
}

export function readContainerdConfig(layout: Layout, opts: ReadOptions): ContainerdConfig {
  const io = hostReader(layout, opts.newFile, opts.edits ?? []);
  const families: Family[] = opts.binary ? [opts.binary.family] : ['1.x', '2.x'];
  let readings = families.map((family) => ({ family, files: loadOrder(opts.root, family, io) }));
  const rootFile = readings[0]!.files[0]!;
  const { version, versionFrom } = rootVersion(rootFile, opts.binary);
  // version 3 and 4 files are containerd 2.x's alone
  if (!opts.binary && version >= 3) readings = readings.filter((r) => r.family === '2.x');
  if (opts.binary?.family === '1.x' && version >= 3) {
    throw new EnvhookError(
      `${opts.root} is a version ${version} config, which containerd ${opts.binary.version} cannot read (1.x reads version 2)`,
    );
  }
  if (opts.binary?.family === '2.x' && versionFrom === 'the root file' && version > defaultConfigVersion(opts.binary)) {
    throw new EnvhookError(
      `${opts.root} is a version ${version} config, newer than containerd ${opts.binary.version} reads (version ${defaultConfigVersion(opts.binary)} at most)`,
    );
  }
  for (const r of readings) for (const f of r.files) if (f.path === opts.newFile && !io.exists(f.path)) f.exists = false;
  return { root: opts.root, version, versionFrom, readings, binary: opts.binary };
}

function rootVersion(root: ConfigFile, binary: ContainerdBinary | undefined): { version: number; versionFrom: string } {
  const empty = Object.keys(root.doc).length === 0;
  if (empty) {
    if (binary)
      return {
        version: defaultConfigVersion(binary),
        versionFrom: `a new file: the version containerd ${binary.version} writes by default`,
      };
    return { version: 2, versionFrom: 'a new file and no containerd binary to ask: version 2, which containerd 1.x and 2.x both read' };
  }
  const v = root.doc.version;
  if (v === undefined || v === 1) {
    throw new EnvhookError(`${root.path} is a version 1 config (no "version = 2" line): migrate it (containerd config migrate) first`);
  }
  if (v !== 2 && v !== 3 && v !== 4) throw new EnvhookError(`${root.path}: unsupported config version`);
  return { version: v, versionFrom: 'the root file' };
}

function hostReader(layout: Layout, newFile: string | undefined, edits: KeyEdit[]): HostReader & { exists(p: string): boolean } {
  const exists = (p: string) => fs.existsSync(layout.real(p));
  return {
    exists,
    read: (p) => {
      const text = readHost(layout, p)?.toString('utf8');
      if (text === undefined) return p === newFile ? '' : undefined;
      return edits.filter((e) => e.file === p).reduce((t, e) => revertEdit(t, e) ?? t, text);
    },
    list: (dir) => {
      let names: string[] | undefined;
      try {
        names = fs.readdirSync(layout.real(dir));
      } catch {
        names = undefined;
      }
      if (newFile && path.posix.dirname(newFile) === dir && !names?.includes(path.posix.basename(newFile)))
        names = [...(names ?? []), path.posix.basename(newFile)];
      return names;
    },
  };
}

/** --drop-in naming a file containerd does not read: the flag, why, and what to do. */
export function dropInNotRead(dropIn: string, root: string): EnvhookError {
  return new EnvhookError(
    `--drop-in ${dropIn}: containerd does not read it: the imports of ${root} (and of the files it imports) do not name it: add it to the imports of ${root}, or leave --drop-in out`,
  );
}
