// The exec sidecar: what lets the sh front give an exec'd process PID 1's env changes without
// starting Node. containerd and CRI-O write an exec's process file from their stored spec with
// the same JSON encoder that wrote the bundle's config.json, so for a plain exec (kubectl exec,
// an exec probe) the file's `"env":[…]` is, byte for byte, the original config.json's process
// env in compact form. At create, when envhook changed the env, the shim writes
// `<bundle>/envhook-exec.data` (0600, like config.json it holds values) with that original text
// and the env the exec applier gives for it (apply/exec-env.ts, the same function the Node exec path
// runs), one a line; the front reads it as data (awk, never the shell) and swaps the one for the
// other in the process file. Any process file whose env is not exactly the original (a tty
// exec's TERM, an exec request's own env, an encoder that writes differently) goes the Node way,
// which decides from the parsed file.
import path from 'node:path';
import { atomicWrite } from '../fs/atomic-write.ts';
import { execEnv } from '../apply/exec-env.ts';
import type { AppliedEnv } from '../plan/mark.ts';
import { STRING_OR_SPACE } from '../oci/json.ts';

export const EXEC_SIDECAR = 'envhook-exec.data';
/** The sidecar's first line: its format (hooks/envhook-runtime checks it). */
const FORMAT = 'envhook exec sidecar 1';

/** oci/json.ts's string-or-whitespace token, anchored where it is asked for. */
const STRING_OR_SPACE_AT = new RegExp(STRING_OR_SPACE.source, 'y');
const ENV_KEY = /"env"[ \t\n\r]*:[ \t\n\r]*\[/g;

/**
 * The compact source text (whitespace outside strings dropped, strings as written) of an array
 * in `text` under a key "env" whose value is `env`, or undefined when there is none.
 */
export function compactEnvText(text: string, env: readonly string[]): string | undefined {
  for (const m of text.matchAll(ENV_KEY)) {
    const start = m.index + m[0].length - 1;
    const end = arrayEnd(text, start);
    if (end === undefined) continue;
    const compact = text.slice(start, end).replace(STRING_OR_SPACE, (s) => (s.startsWith('"') ? s : ''));
    let value: unknown;
    try {
      value = JSON.parse(compact);
    } catch {
      continue;
    }
    if (Array.isArray(value) && value.length === env.length && value.every((v, i) => v === env[i])) return compact;
  }
  return undefined;
}

/** The index after the `]` that closes the array of strings opening at `open`. */
function arrayEnd(text: string, open: number): number | undefined {
  let i = open + 1;
  for (;;) {
    const c = text[i];
    if (c === ']') return i + 1;
    if (c === ',' && i > open + 1) {
      i++;
      continue;
    }
    STRING_OR_SPACE_AT.lastIndex = i;
    const m = STRING_OR_SPACE_AT.exec(text);
    if (!m) return undefined;
    i += m[0].length;
  }
}

export interface ExecSidecar {
  bundle: string;
  /** The container's id (runc's create argument): the front uses the sidecar for this id only. */
  id: string;
  /** config.json's text before envhook's rewrite, and its process env. */
  original: string;
  originalEnv: readonly string[];
  /** PID 1's env after it. */
  finalEnv: readonly string[];
  mark: AppliedEnv;
  /** For messages: config.json's path. */
  where: string;
}

/**
 * Writes the bundle's exec sidecar for a create whose env envhook changed. Nothing is written
 * when the original has no env array to find, or the id is not one line (the Node path then
 * serves every exec).
 */
export function writeExecSidecar(s: ExecSidecar): boolean {
  const from = compactEnvText(s.original, s.originalEnv);
  if (from === undefined) return false;
  const to = JSON.stringify(execEnv(s.originalEnv, s.mark, s.finalEnv, s.where));
  // One field a line: compact JSON has no raw newline; an id with one gets no sidecar.
  if (s.id.includes('\n')) return false;
  const text = [FORMAT, s.id, from, to, ''].join('\n');
  atomicWrite(path.join(s.bundle, EXEC_SIDECAR), text, { newFileMode: 0o600 });
  return true;
}
