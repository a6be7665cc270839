// Reading the runtimes' TOML files: smol-toml only reads (admins' files are never
// re-serialised), and a syntax error names the position, never the file's text.
import { parse, TomlError } from 'smol-toml';
import { EnvhookError } from '../errors.ts';

export type Table = Record<string, unknown>;

export function parseToml(text: string, file: string): Table {
  try {
    return parse(text) as Table;
  } catch (cause) {
    // smol-toml's message quotes the file: report the position only
    const at = cause instanceof TomlError ? ` (line ${cause.line}, column ${cause.column})` : '';
    throw new EnvhookError(`${file} is not valid TOML${at}`, { cause: new Error('TOML syntax error') });
  }
}

/** The sub-table `t[key]`, or undefined when it is absent or not a table. */
export function table(t: Table | undefined, key: string): Table | undefined {
  const v = t?.[key];
  return v && typeof v === 'object' && !Array.isArray(v) && !(v instanceof Date) ? (v as Table) : undefined;
}

/** The table at a path of keys, or undefined. */
export function tableAt(t: Table | undefined, ...keys: string[]): Table | undefined {
  return keys.reduce<Table | undefined>((acc, k) => table(acc, k), t);
}
