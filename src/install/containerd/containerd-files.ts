// The files containerd reads, in the order it merges them: the root file (`containerd --config`),
// then its `imports`, breadth first (each file's imports go to the back of the queue), a file
// already read is skipped. How an import names a file depends on the containerd line:
//   2.x: the path is cleaned, a relative one joined to the importing file's directory, then
//        expanded when it holds `*`; an import that does not exist is skipped;
//   1.x: a path holding `*` is expanded as written, so a relative pattern is relative to
//        containerd's working directory (/ under systemd); other relative paths are joined to
//        the importing file's directory; an import that does not exist stops containerd.
// (containerd's LoadConfig and resolveImports; checked against both binaries' `config dump`.)
// Each file is read without envhook's own block, so that placement sees the admin's layout.
import path from 'node:path';
import { EnvhookError } from '../../errors.ts';
import { splitBlock } from '../block.ts';
import { goGlob, type ListDir } from './go-glob.ts';
import { parseToml, type Table } from '../toml.ts';

export type Family = '1.x' | '2.x';

export interface ConfigFile {
  /** Host path. */
  path: string;
  exists: boolean;
  /** The file's text without envhook's block. */
  text: string;
  hadBlock: boolean;
  doc: Table;
  /** The `version` line; 0 when there is none. */
  version: number;
  /** The file whose `imports` named this one; undefined for the root. */
  importedBy: string | undefined;
}

export interface HostReader {
  /** The file's text, or undefined when it does not exist. */
  read(hostPath: string): string | undefined;
  list: ListDir;
}

export function loadOrder(rootPath: string, family: Family, io: HostReader): ConfigFile[] {
  const out: ConfigFile[] = [];
  const loaded = new Set<string>();
  const pending: { file: string; parent: string | undefined }[] = [{ file: rootPath, parent: undefined }];
  while (pending.length > 0) {
    const { file, parent } = pending.shift()!;
    if (loaded.has(file)) continue;
    loaded.add(file);
    const raw = io.read(file);
    if (raw === undefined) {
      // a missing root is a node running on containerd's defaults: install creates the file
      if (parent === undefined)
        out.push({ path: file, exists: false, text: '', hadBlock: false, doc: {}, version: 0, importedBy: undefined });
      else if (family === '1.x')
        throw new EnvhookError(
          `${parent} imports ${file}, which does not exist: containerd 1.x does not start with it; create the file or remove the import`,
        );
      continue;
    }
    const { rest, block } = splitBlock(raw, file);
    const doc = parseToml(rest, file);
    const version = typeof doc.version === 'number' ? doc.version : 0;
    out.push({ path: file, exists: true, text: rest, hadBlock: block !== undefined, doc, version, importedBy: parent });
    for (const next of resolveImports(file, importsOf(doc, file), family, io.list)) pending.push({ file: next, parent: file });
  }
  return out;
}

function importsOf(doc: Table, file: string): string[] {
  const v = doc.imports;
  if (v === undefined) return [];
  if (!Array.isArray(v) || v.some((i) => typeof i !== 'string')) throw new EnvhookError(`${file}: imports is not a list of strings`);
  return v as string[];
}

function resolveImports(parent: string, imports: string[], family: Family, list: ListDir): string[] {
  const out: string[] = [];
  const joined = (p: string) => (path.posix.isAbsolute(p) ? path.posix.normalize(p) : path.posix.join(path.posix.dirname(parent), p));
  for (const imp of imports) {
    if (family === '2.x') {
      const p = joined(imp);
      out.push(...(p.includes('*') ? goGlob(p, list) : [p]));
    } else if (imp.includes('*')) {
      out.push(...goGlob(path.posix.resolve('/', imp), list));
    } else {
      out.push(joined(imp));
    }
  }
  return out;
}
