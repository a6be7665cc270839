// The repository stands alone: a user's clone has nothing beside it, so no tracked file may
// refer to the directory next to the checkout (the team's working material lives there).
import t from 'tap';
import { execFileSync } from 'node:child_process';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
// Built from pieces so that this file does not match itself.
const besideRepo = ['..', 'shared'].join('/');

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
