// npm run test:unit's choice of files (scripts/unit-tests.mjs --list): no end-to-end file, none
// that drives a runtime or runs the built CLI, and the parser's and the schema's own tests in it.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';

const root = path.resolve(import.meta.dirname, '../..');

t.test('the files it runs, by rule', async (t) => {
  const r = spawnSync(path.join(root, 'node_modules/.bin/node'), ['scripts/unit-tests.mjs', '--list'], { cwd: root, encoding: 'utf8' });
  t.equal(r.status, 0, r.stderr);
  const files = r.stdout.split('\n').filter(Boolean);
  for (const f of ['test/envfile/parse.test.ts', 'test/schema.test.ts', 'test/k8s/annotations.test.ts', 'test/lint/cross.test.ts'])
    t.ok(files.includes(f), f);
  for (const f of ['test/e2e/cri.test.ts', 'test/security/crash.test.ts', 'test/cli/check.test.ts', 'test/envfile/differential.test.ts'])
    t.notOk(files.includes(f), `not ${f}`);
  const driving = files.filter((f) =>
    /helpers\/(cri|install|nri|shim|watch)\/|missingFor|dist\//.test(fs.readFileSync(path.join(root, f), 'utf8')),
  );
  t.same(driving, [], 'no file that drives a runtime or reads the build');
  t.ok(files.every((f) => f.startsWith('test/') && f.endsWith('.test.ts')));
  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
  t.equal(pkg.scripts['test:unit'], 'node scripts/unit-tests.mjs');
});
