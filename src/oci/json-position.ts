// Where in a JSON text something is, as line:column (1-based, columns in UTF-16 units as editors
// count them): the first syntax error, and a top-level key. For an admin's small JSON file
// (/etc/envhook/config.json), whose errors must name the line, never quote it. V8's message
// quotes the input, so only its `position N` is taken; where it gives none ("Unexpected token"),
// the error is the end of the shortest prefix that fails with anything but "end of input".

export interface TextPosition {
  line: number;
  column: number;
}

/** 1-based line and column of `offset` in `text`. */
export function positionAt(text: string, offset: number): TextPosition {
  const before = text.slice(0, Math.max(0, offset));
  const line = before.split('\n').length;
  return { line, column: before.length - before.lastIndexOf('\n') };
}

/** The position of the first JSON syntax error in `text`, or undefined when it parses. */
export function jsonSyntaxErrorAt(text: string): TextPosition | undefined {
  const failure = (t: string): string | undefined => {
    try {
      JSON.parse(t);
      return undefined;
    } catch (err) {
      return err instanceof Error ? err.message : 'error';
    }
  };
  const message = failure(text);
  if (message === undefined) return undefined;
  const given = /at position (\d+)/.exec(message);
  if (given) return positionAt(text, Number(given[1]));
  if (/Unexpected end of JSON input/.test(message)) return positionAt(text, text.length);
  // The shortest prefix that fails otherwise than by ending early ends at the offending character.
  const broken = (n: number) => {
    const m = failure(text.slice(0, n));
    return m !== undefined && !/Unexpected end of JSON input|Unterminated string/.test(m);
  };
  let [lo, hi] = [0, text.length];
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (broken(mid)) hi = mid;
    else lo = mid + 1;
  }
  return positionAt(text, Math.max(0, lo - 1));
}

/** The position of the top-level object's key `key` (its opening quote), or undefined. */
export function jsonKeyAt(text: string, key: string): TextPosition | undefined {
  let depth = 0;
  const token = /"(?:[^"\\]|\\.)*"|[{}[\]]/gs;
  for (let m = token.exec(text); m; m = token.exec(text)) {
    const t = m[0];
    if (t === '{' || t === '[') depth++;
    else if (t === '}' || t === ']') depth--;
    else if (depth === 1 && /^\s*:/.test(text.slice(token.lastIndex))) {
      let name: unknown;
      try {
        name = JSON.parse(t);
      } catch {
        continue;
      }
      if (name === key) return positionAt(text, m.index);
    }
  }
  return undefined;
}
