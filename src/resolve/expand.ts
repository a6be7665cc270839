// Kubernetes `$(VAR)` expansion, a line-by-line port of
// k8s.io/kubernetes/third_party/forked/golang/expansion (Expand, tryReadVariableName and
// MappingFuncFor's undefined case): `$$` → `$`; `$(NAME)` → the value when NAME is defined,
// else kept as written; `$(` with no closing `)` and `$` before any other character (or at the
// end) are kept; the result is never expanded again. One deliberate difference: Go copies the
// byte after a lone `$` as a rune, which garbles a non-ASCII character (`$é` → `$Ã©`); we work
// on characters and keep it as written.

const OPERATOR = '$';
const OPENER = '(';
const CLOSER = ')';

/** Expands `input` with `lookup` (undefined: not defined, the reference stays as written). */
export function expand(input: string, lookup: (name: string) => string | undefined): string {
  let out = '';
  let checkpoint = 0;
  for (let cursor = 0; cursor < input.length; cursor++) {
    if (input[cursor] !== OPERATOR || cursor + 1 >= input.length) continue;
    out += input.slice(checkpoint, cursor);
    const { read, isVar, advance } = tryReadVariableName(input, cursor + 1);
    out += isVar ? (lookup(read) ?? `${OPERATOR}${OPENER}${read}${CLOSER}`) : read;
    cursor += advance;
    checkpoint = cursor + 1;
  }
  return out + input.slice(checkpoint);
}

/** Reads after a `$` at `start`: what to emit (or the name), and how many characters it used. */
function tryReadVariableName(input: string, start: number): { read: string; isVar: boolean; advance: number } {
  const c = input[start]!;
  if (c === OPERATOR) return { read: OPERATOR, isVar: false, advance: 1 };
  if (c === OPENER) {
    const close = input.indexOf(CLOSER, start + 1);
    if (close >= 0) return { read: input.slice(start + 1, close), isVar: true, advance: close - start + 1 };
    // Unterminated: emit `$(` and go on scanning after the `(`.
    return { read: OPERATOR + OPENER, isVar: false, advance: 1 };
  }
  return { read: OPERATOR + c, isVar: false, advance: 1 };
}
