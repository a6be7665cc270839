// Go's filepath.Glob on Linux, which containerd uses to expand `imports`: `*` and `?` never
// match `/` but do match a leading dot, `[...]` / `[^...]` classes with ranges, `\` escapes the
// next character; matches come in name order, directory by directory; unreadable directories and
// non-directories are skipped silently, as Go does. Matching the rules matters: the order of the
// matches is containerd's merge order.
import path from 'node:path';
import { EnvhookError } from '../../errors.ts';

/** Lists the names in a host directory, or undefined when it is not a readable directory. */
export type ListDir = (hostDir: string) => string[] | undefined;

export function hasMeta(p: string): boolean {
  return /[*?[\\]/.test(p);
}

/** Matches of an absolute, cleaned pattern, in Go's order. */
export function goGlob(pattern: string, list: ListDir): string[] {
  if (!hasMeta(pattern)) return list(path.posix.dirname(pattern))?.includes(path.posix.basename(pattern)) ? [pattern] : [];
  const dir = path.posix.dirname(pattern);
  const base = path.posix.basename(pattern);
  const re = componentRegex(base, pattern);
  const dirs = hasMeta(dir) ? goGlob(dir, list) : [dir];
  const out: string[] = [];
  for (const d of dirs) {
    const names = list(d);
    if (!names) continue;
    for (const n of [...names].sort(byBytes)) if (re.test(n)) out.push(path.posix.join(d, n));
  }
  return out;
}

// Go sorts names as byte strings
function byBytes(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}

function componentRegex(pat: string, whole: string): RegExp {
  let re = '';
  for (let i = 0; i < pat.length; i++) {
    const c = pat[i]!;
    if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else if (c === '\\') {
      if (i + 1 >= pat.length) throw badPattern(whole);
      re += escape(pat[++i]!);
    } else if (c === '[') {
      const end = classEnd(pat, i);
      if (end < 0) throw badPattern(whole);
      let body = pat.slice(i + 1, end);
      const negate = body.startsWith('^');
      if (negate) body = body.slice(1);
      if (body === '') throw badPattern(whole);
      // Go's class: literal characters, `a-b` ranges, `\x` escapes
      let cls = '';
      for (let j = 0; j < body.length; j++) {
        if (body[j] === '\\') cls += escape(body[++j] ?? '');
        else cls += body[j] === '-' ? '-' : escape(body[j]!);
      }
      re += negate ? `(?!/)[^${cls}]` : `[${cls}]`;
      i = end;
    } else re += escape(c);
  }
  return new RegExp(`^${re}$`, 's');
}

function classEnd(pat: string, start: number): number {
  for (let i = start + 1; i < pat.length; i++) {
    if (pat[i] === '\\') i++;
    else if (pat[i] === ']') return i;
  }
  return -1;
}

function escape(c: string): string {
  return c.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
}

function badPattern(p: string): EnvhookError {
  return new EnvhookError(`import pattern ${JSON.stringify(p)} is malformed (containerd would fail to start)`);
}
