// The user-facing pages stand alone: every Markdown link in them names a file of the repository
// (never a web address: README and docs/ are the complete reference), and a link to a heading
// (`page.md#anchor`, `#anchor`) names a heading that page has, spelt as GitHub spells anchors.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { REPO } from './helpers/bundle.ts';
import { anchors, prose } from './helpers/markdown.ts';

const PAGES = [
  'README.md',
  'CONTRIBUTING.md',
  'SECURITY.md',
  'bench/README.md',
  'bench/nri-figures.md',
  'bench/soak.md',
  ...fs
    .readdirSync(path.join(REPO, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

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
