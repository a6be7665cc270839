// A small line-based unified diff for `install --dry-run` (config files are a few hundred
// lines at most, so the plain O(n·m) longest-common-subsequence table is fine).

export function unifiedDiff(before: string, after: string, name: string, context = 3): string {
  if (before === after) return '';
  const a = toLines(before);
  const b = toLines(after);
  const ops = diffOps(a, b);
  const out = [`--- ${name}`, `+++ ${name}`];
  let i = 0;
  while (i < ops.length) {
    if (ops[i]!.op === ' ') {
      i++;
      continue;
    }
    const start = Math.max(0, i - context);
    let end = i;
    // extend the hunk while changes are within 2*context lines of each other
    for (let j = i; j < ops.length; j++) {
      if (ops[j]!.op !== ' ') end = j;
      else if (j - end > 2 * context) break;
    }
    end = Math.min(ops.length - 1, end + context);
    const hunk = ops.slice(start, end + 1);
    const first = hunk[0]!;
    const aLen = hunk.filter((o) => o.op !== '+').length;
    const bLen = hunk.filter((o) => o.op !== '-').length;
    out.push(`@@ -${first.ai + (aLen ? 1 : 0)},${aLen} +${first.bi + (bLen ? 1 : 0)},${bLen} @@`);
    for (const o of hunk) out.push(o.op + o.line);
    i = end + 1;
  }
  return out.join('\n') + '\n';
}

interface Op {
  op: ' ' | '-' | '+';
  line: string;
  ai: number;
  bi: number;
}

function diffOps(a: string[], b: string[]): Op[] {
  const n = a.length;
  const m = b.length;
  const lcs = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i]![j] = a[i] === b[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
    }
  }
  const ops: Op[] = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] === b[j]) ops.push({ op: ' ', line: a[i]!, ai: i++, bi: j++ });
    else if (i < n && (j >= m || lcs[i + 1]![j]! >= lcs[i]![j + 1]!)) ops.push({ op: '-', line: a[i]!, ai: i++, bi: j });
    else ops.push({ op: '+', line: b[j]!, ai: i, bi: j++ });
  }
  return ops;
}

function toLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  else lines[lines.length - 1] += '\n\\ No newline at end of file';
  return lines;
}
