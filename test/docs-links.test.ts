// The user-facing pages stand alone: every Markdown link in them names a file of the repository
// (never a web address: README and docs/ are the complete reference), and a link to a heading
// (`page.md#anchor`, `#anchor`) names a heading that page has, spelt as GitHub spells anchors.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { REPO } from './helpers/bundle.ts';

const PAGES = [
  'README.md',
  'CONTRIBUTING.md',
  'SECURITY.md',
  'bench/README.md',
  ...fs
    .readdirSync(path.join(REPO, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

/** The page's lines outside fenced code blocks. */
function prose(text: string): string[] {
  let fenced = false;
  return text.split('\n').filter((line) => {
    if (/^\s*```/.test(line)) {
      fenced = !fenced;
      return false;
    }
    return !fenced;
  });
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens, -1, -2 for repeats. */
function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const line of prose(text)) {
    const m = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const base = m[1]!
      .toLowerCase()
      .replace(/[^\p{L}\p{N}_\- ]/gu, '')
      .replace(/ /g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

t.test('the anchor rule spells headings as GitHub does', async (t) => {
  t.same(
    [...anchors('# A b\n## `envhook.io/env`\n### Required: `install --mode nri`\n## A b\n```\n# not a heading\n```\n')],
    ['a-b', 'envhookioenv', 'required-install---mode-nri', 'a-b-1'],
  );
});

for (const page of PAGES) {
  t.test(page, async (t) => {
    const text = fs.readFileSync(path.join(REPO, page), 'utf8');
    const links = prose(text)
      .join('\n')
      .replace(/`[^`\n]*`/g, '')
      .matchAll(/\]\(([^)\s]+)\)/g);
    for (const [, link] of links) {
      t.notMatch(link!, /^[a-z][a-z0-9+.-]*:/i, `${page}: ${link} stays inside the repository`);
      if (/^[a-z][a-z0-9+.-]*:/i.test(link!)) continue;
      const [file = '', anchor] = link!.split('#');
      const target = file ? path.resolve(path.dirname(path.join(REPO, page)), file) : path.join(REPO, page);
      t.ok(target.startsWith(REPO + path.sep) || target === REPO, `${page}: ${link} is inside the repository`);
      if (!t.ok(fs.existsSync(target), `${page}: ${link} exists`)) continue;
      if (anchor !== undefined)
        t.ok(anchors(fs.readFileSync(target, 'utf8')).has(anchor), `${page}: ${link} names a heading of ${path.relative(REPO, target)}`);
    }
  });
}
