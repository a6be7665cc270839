// onPath finds an executable regular file as a shell would (first PATH entry wins, an empty
// entry is the working directory); versionMatch reads a real program's --version.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { onPath, versionMatch } from '../../src/install/which.ts';

function script(dir: string, name: string, body: string, mode = 0o755): string {
  fs.mkdirSync(dir, { recursive: true });
  const p = path.join(dir, name);
  fs.writeFileSync(p, `#!/bin/sh\n${body}\n`, { mode });
  return p;
}

t.test('onPath: the first executable regular file; not a directory, not a file without x', async (t) => {
  const d = t.testdir();
  script(path.join(d, 'a'), 'tool', 'exit 0', 0o644);
  fs.mkdirSync(path.join(d, 'b', 'tool'), { recursive: true });
  const c = script(path.join(d, 'c'), 'tool', 'exit 0');
  script(path.join(d, 'e'), 'tool', 'exit 0');
  const PATH = ['a', 'b', 'c', 'e'].map((x) => path.join(d, x)).join(':');
  t.equal(onPath('tool', PATH), c);
  t.equal(onPath('absent', PATH), undefined);
  const cwd = process.cwd();
  process.chdir(path.dirname(c));
  t.teardown(() => process.chdir(cwd));
  t.equal(onPath('tool', `${path.join(d, 'a')}::${path.join(d, 'e')}`), path.join('.', 'tool'), 'an empty entry is the working directory');
});

t.test('versionMatch: the match in what --version prints; a failure names the program and the exit', async (t) => {
  const d = t.testdir();
  const ok = script(d, 'rt', 'echo "rt version 1.36.3"');
  t.equal(versionMatch(ok, 'rt', /version (\d+)\.(\d+)/)[0], 'version 1.36');
  t.throws(() => versionMatch(ok, 'rt', /v(9)/), { message: `${ok} --version did not print a rt version (exit 0)` });
  const bad = script(d, 'bad', 'echo "bad version 1.0"; exit 3');
  t.throws(() => versionMatch(bad, 'bad', /version/), { message: `${bad} --version did not print a bad version (exit 3)` });
  const missing = path.join(d, 'missing');
  t.throws(() => versionMatch(missing, 'x', /./), {
    message: `${missing} --version did not print a x version (exit spawnSync ${missing} ENOENT)`,
  });
});
