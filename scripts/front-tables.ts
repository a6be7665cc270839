// The runtime front's tables, made from the TypeScript tables they mirror: scripts/build.mjs
// writes them into hooks/envhook-runtime, so the front and src/ read argv and annotation keys
// alike by construction, and the front still reads plain sh at start-up (no file to source).
// A front line that ends `# from NAME` is written here: NAME's words as a case arm's patterns,
// or NAME's value as a variable's single-quoted value. Edit the table, never the line.
import { ENVHOOK_PREFIX, APPLIED_KEY, APPLIED_ENV_KEY } from '../src/k8s/annotation-keys.ts';
import { SANDBOX_KEYS } from '../src/k8s/identity.ts';
import {
  BUNDLE_OPTIONS,
  CREATE_BOOLEAN_OPTIONS,
  CREATE_VALUE_OPTIONS,
  GLOBAL_INFO_FLAGS,
  GLOBAL_VALUE_OPTIONS,
  RUN_BOOLEAN_OPTIONS,
} from '../src/oci/runc-args.ts';
import { EXEC_VALUE_OPTIONS, PROCESS_OPTIONS } from '../src/oci/runc-exec-args.ts';

type Table = { arm: readonly string[] } | { value: string };

const minus = (all: Iterable<string>, some: readonly string[]): string[] => [...all].filter((w) => !some.includes(w));
/** `s` as a POSIX extended regular expression that matches exactly it. */
const ere = (s: string): string => s.replace(/[.[\]\\()*+?{}|^$]/g, '\\$&');

/**
 * A JSON `\u00XX` escape of any character of `text` (ASCII), as an ERE: the codes grouped by
 * their first hex digit, each letter digit in both cases: "envhook.io/" → `\\u00(2[eEfF]|6[589bBeEfF]|76)`.
 */
export function escapesOf(text: string): string {
  const byHigh = new Map<string, Set<string>>();
  for (const c of new Set(text)) {
    if (c.charCodeAt(0) > 0x7f) throw new Error(`escapesOf: ${JSON.stringify(c)} is not ASCII`);
    const hex = c.charCodeAt(0).toString(16).padStart(2, '0');
    const lows = byHigh.get(hex[0]!) ?? new Set<string>();
    byHigh.set(hex[0]!, lows.add(hex[1]!));
  }
  const groups = [...byHigh.keys()].sort().map((high) => {
    const lows = [...byHigh.get(high)!].sort().flatMap((d) => (/[a-f]/.test(d) ? [d, d.toUpperCase()] : [d]));
    return lows.length === 1 ? high + lows[0] : `${high}[${lows.join('')}]`;
  });
  return `\\\\u00(${groups.join('|')})`;
}

/** The sandbox pattern: every key of SANDBOX_KEYS as a member's key (a real quote before it), with its value. */
function sandboxPattern(): string {
  const values = new Set(Object.values(SANDBOX_KEYS));
  if (values.size !== 1) throw new Error('front-tables: the front reads one sandbox value for every SANDBOX_KEYS key');
  const keys = Object.keys(SANDBOX_KEYS).map(ere).join('|');
  return `(^|[^\\])"(${keys})"[[:space:]]*:[[:space:]]*"${ere([...values][0]!)}"`;
}

/** Every table of the front, by the NAME its lines end with. */
export function frontTables(): Record<string, Table> {
  const prefix = ENVHOOK_PREFIX.replace(/\/$/, '');
  return {
    GLOBAL_INFO_FLAGS: { arm: GLOBAL_INFO_FLAGS },
    GLOBAL_VALUE_OPTIONS: { arm: GLOBAL_VALUE_OPTIONS },
    BUNDLE_OPTIONS: { arm: BUNDLE_OPTIONS },
    // the bundle's options have the arm before
    CREATE_VALUE_OPTIONS: { arm: minus(CREATE_VALUE_OPTIONS, BUNDLE_OPTIONS) },
    CREATE_BOOLEAN_OPTIONS: { arm: [...CREATE_BOOLEAN_OPTIONS] },
    RUN_BOOLEAN_OPTIONS: { arm: [...RUN_BOOLEAN_OPTIONS] },
    PROCESS_OPTIONS: { arm: PROCESS_OPTIONS },
    EXEC_VALUE_OPTIONS: { arm: minus(EXEC_VALUE_OPTIONS, PROCESS_OPTIONS) },
    SANDBOX_KEYS: { value: sandboxPattern() },
    SANDBOX_VALUE: { value: `"${Object.values(SANDBOX_KEYS)[0]}"` },
    APPLIED_KEY: { value: `(^|[^\\])"${ere(APPLIED_KEY)}"[[:space:]]*:` },
    APPLIED_KEY_END: { value: `${APPLIED_KEY.slice(APPLIED_KEY.lastIndexOf('/'))}"` },
    ENVHOOK_PREFIX: { value: `(^|[^\\])"${ere(prefix)}|${escapesOf(ENVHOOK_PREFIX)}` },
    APPLIED_ENV_KEY: { value: `${ere(APPLIED_ENV_KEY).replace('/', '(/|\\\\/)')}|${escapesOf(APPLIED_ENV_KEY)}` },
  };
}

const ARM = /^(\s*)[^)]*\)(.*# from (\w+))$/;
const VALUE = /^(\s*\w+=)'[^']*'(\s*# from (\w+))$/;

/** The front `text` with every `# from NAME` line written from `tables`; throws on a NAME it has not, or lacks. */
export function renderFront(text: string, tables: Record<string, Table> = frontTables()): string {
  const seen = new Set<string>();
  const lines = text.split('\n').map((line, i) => {
    const m = VALUE.exec(line) ?? ARM.exec(line);
    if (!m) {
      if (/# from \w+$/.test(line)) throw new Error(`hooks/envhook-runtime:${i + 1}: a "# from" line is neither NAME='…' nor a case arm`);
      return line;
    }
    const name = m[3]!;
    const table = tables[name];
    if (!table) throw new Error(`hooks/envhook-runtime:${i + 1}: no table ${name} in scripts/front-tables.ts`);
    seen.add(name);
    const isValue = VALUE.test(line);
    const kind = (value: boolean) => (value ? 'a value' : 'a case arm');
    if (isValue !== 'value' in table)
      throw new Error(`hooks/envhook-runtime:${i + 1}: ${name} is ${kind(!isValue)}, this line ${kind(isValue)}`);
    if ('value' in table) {
      if (table.value.includes("'")) throw new Error(`front-tables: ${name} has a single quote`);
      return `${m[1]}'${table.value}'${m[2]}`;
    }
    return `${m[1]}${table.arm.join(' | ')})${m[2]}`;
  });
  const missing = Object.keys(tables).filter((name) => !seen.has(name));
  if (missing.length) throw new Error(`hooks/envhook-runtime: no line "# from ${missing.join('", "# from ')}"`);
  return lines.join('\n');
}
