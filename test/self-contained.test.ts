// The repository stands alone: a user's clone has nothing beside it, so no tracked file may
// refer to the directory next to the checkout (the team's working material lives there).
import t from 'tap';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { anchors } from './helpers/markdown.ts';

const root = path.resolve(import.meta.dirname, '..');
// Built from pieces so that this file does not match itself.
const besideRepo = ['..', 'shared'].join('/');
const CODE = ['src', 'test', 'scripts', 'bench', 'hooks', 'examples'];

/** `git grep -n -E` over the tracked files under `dirs`: the matching lines, '' when none. */
function grepTracked(pattern: string, dirs: string[]): string {
  try {
    return execFileSync('git', ['grep', '-n', '-I', '-E', pattern, '--', ...dirs], { cwd: root, encoding: 'utf8' });
  } catch (err) {
    // git grep exits 1 when nothing matches: the good case.
    if ((err as { status?: number }).status !== 1) throw err;
    return '';
  }
}

t.test('no tracked file refers to the directory beside the repository', async (t) => {
  const files = execFileSync('git', ['ls-files', '-z'], { cwd: root, encoding: 'utf8' }).split('\0').filter(Boolean);
  t.ok(files.length > 50, `git ls-files lists the repository (${files.length} files)`);
  let hits = '';
  try {
    hits = execFileSync('git', ['grep', '-n', '-F', besideRepo, '--', '.'], { cwd: root, encoding: 'utf8' });
  } catch (err) {
    // git grep exits 1 when nothing matches: the good case.
    if ((err as { status?: number }).status !== 1) throw err;
  }
  t.equal(hits, '', 'no tracked file names the directory beside the repository');
});

t.test("the kubelet parser cases are the repository's own fixture", async (t) => {
  const { kubeletCases, KUBELET_CASES_FILE } = await import('./envfile/kubelet-cases.ts');
  t.ok(KUBELET_CASES_FILE.startsWith(root + path.sep), 'the fixture is inside the checkout');
  t.equal(kubeletCases().length, 48, 'all 48 kubelet cases');
});

// The design and the rules a comment relies on are in docs/ (docs/design.md for the engineer):
// never the team's contract, an issue tracker's number or a path of the machine that wrote it.
t.test('no source refers to a document outside the repository', async (t) => {
  const outside: [string, string][] = [
    ['the team contract by section', ['SPEC', '§'].join(' ')],
    ['the directory beside the checkout', ['\\.\\.', 'shared'].join('/')],
    ["the team's working directories", ['/work', '(team|shared|main|wt-)'].join('/')],
    ['an issue by number', ['\\b[Ii]ssues?', '#?[0-9]+'].join(' ')],
  ];
  for (const [what, pattern] of outside) t.equal(grepTracked(pattern, CODE), '', `no source names ${what}`);
});

t.test('every docs/… .md#anchor a source names is a heading of that page', async (t) => {
  const refs = grepTracked(['docs/[a-z0-9-]+', 'md#[a-z0-9-]+'].join('\\.'), CODE);
  let checked = 0;
  for (const m of refs.matchAll(/^([^:\n]+):(\d+):.*$/gm)) {
    for (const [, page, anchor] of m[0].matchAll(/\b(docs\/[a-z0-9-]+\.md)((?:#[a-z0-9-]+(?:, )?)+)/g)) {
      const headings = anchors(fs.readFileSync(path.join(root, page!), 'utf8'));
      for (const a of anchor!.split(/, |#/).filter(Boolean)) {
        checked++;
        t.ok(headings.has(a), `${m[1]}:${m[2]}: ${page}#${a} names a heading`);
      }
    }
  }
  t.ok(checked > 30, `the sources point at docs/ headings (${checked} references)`);
});
