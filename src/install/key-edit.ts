// One key of an admin's TOML file changed in place (`install --enable-nri`: `disable = true` in
// containerd's NRI table becomes `disable = false`). Only that line changes: the rest of the
// admin's bytes stay as they are, and the record of the edit (the line before and after) lets
// uninstall put exactly that line back, even when another install's block sits in the same file.
import { isDeepStrictEqual } from 'node:util';
import { parseToml, type Table } from './toml.ts';

export interface KeyEdit {
  /** Host path of the admin's file. */
  file: string;
  /** The table holding the key, as keys (plugins, io.containerd.nri.v1.nri). */
  table: string[];
  key: string;
  /** The admin's line (no newline); null when install added the line after the table's header. */
  from: string | null;
  /** The line install wrote there. */
  to: string;
}

/** The key set to `value` in `table` of `text`, as an edit; undefined when the file has no such table header or the line cannot be changed alone. */
export function planKeyEdit(file: string, text: string, table: string[], key: string, value: string): KeyEdit | undefined {
  const lines = text.split('\n');
  const section = findSection(lines, table);
  if (!section) return undefined;
  const keyLine = new RegExp(`^(\\s*)${key}(\\s*=\\s*)([^#]*?)(\\s*(?:#[^\\n]*)?)$`);
  const at = lines.slice(section.start + 1, section.end).findIndex((l) => keyLine.test(l));
  let edit: KeyEdit;
  if (at >= 0) {
    const from = lines[section.start + 1 + at]!;
    edit = { file, table, key, from, to: from.replace(keyLine, `$1${key}$2${value}$4`) };
  } else {
    // indented as the table's other keys are (containerd writes two spaces a level)
    const next = lines.slice(section.start + 1, section.end).find((l) => /^\s*[A-Za-z0-9_"-]/.test(l));
    const indent = next?.match(/^\s*/)?.[0] ?? '';
    const cr = lines[section.start]!.endsWith('\r') ? '\r' : '';
    edit = { file, table, key, from: null, to: `${indent}${key} = ${value}${cr}` };
  }
  // the parsed file must differ in that one key and nowhere else
  const after = applyEdit(text, edit);
  if (after === undefined) return undefined;
  const expected = parseToml(text, file);
  let t: Table = expected;
  for (const k of table) t = t[k] as Table;
  t[key] = parseToml(`v = ${value}`, file).v;
  return isDeepStrictEqual(parseToml(after, file), expected) ? edit : undefined;
}

/** `text` with the edit made; undefined when the admin's line is not where the edit expects it. */
export function applyEdit(text: string, edit: KeyEdit): string | undefined {
  return swap(text, edit, edit.from, edit.to);
}

/** `text` with the edit's line put back as it was; undefined when install's line is not there any more. */
export function revertEdit(text: string, edit: KeyEdit): string | undefined {
  return swap(text, edit, edit.to, edit.from);
}

/** True when `text` carries the edit (install's line in its table). */
export function hasEdit(text: string, edit: KeyEdit): boolean {
  return revertEdit(text, edit) !== undefined;
}

function swap(text: string, edit: KeyEdit, from: string | null, to: string | null): string | undefined {
  const lines = text.split('\n');
  const section = findSection(lines, edit.table);
  if (!section) return undefined;
  if (from === null) {
    // an added line goes right after the header
    lines.splice(section.start + 1, 0, to!);
    return lines.join('\n');
  }
  const at = lines.findIndex((l, i) => i > section.start && i < section.end && l === from);
  if (at < 0) return undefined;
  if (to === null) {
    if (at !== section.start + 1) return undefined;
    lines.splice(at, 1);
  } else lines[at] = to;
  return lines.join('\n');
}

/** The lines of the one `[table]` header for `table` and the next header (or the end). */
function findSection(lines: string[], table: string[]): { start: number; end: number } | undefined {
  const headers = lines.flatMap((l, i) => (/^\s*\[/.test(l) ? [{ i, keys: headerKeys(l) }] : []));
  const own = headers.filter((h) => isDeepStrictEqual(h.keys, table));
  if (own.length !== 1) return undefined;
  const start = own[0]!.i;
  const end = headers.find((h) => h.i > start)?.i ?? lines.length;
  return { start, end };
}

/** The keys a `[a."b.c"]` header line names; undefined for an array of tables or a line that is not a header. */
function headerKeys(line: string): string[] | undefined {
  if (/^\s*\[\[/.test(line)) return undefined;
  let doc: unknown;
  try {
    // a CRLF file's lines end in \r, which TOML allows only before \n
    doc = parseToml(line.replace(/\r$/, ''), 'header');
  } catch {
    return undefined;
  }
  const keys: string[] = [];
  while (doc && typeof doc === 'object' && !Array.isArray(doc) && Object.keys(doc).length === 1) {
    const k = Object.keys(doc)[0]!;
    keys.push(k);
    doc = (doc as Table)[k];
  }
  return keys;
}
