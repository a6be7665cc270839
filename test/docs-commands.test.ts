// The commands README.md and bench/README.md (and soak.md) give run as written on a machine whose own `node`
// is older than the project's Node 24: a script is run by `npx node` (the `node` devDependency),
// `node_modules/.bin/node` or an npm script, never by a bare `node`; each file named exists.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';

const root = path.resolve(import.meta.dirname, '..');
const BARE = /(?<!npx )(?<![/.\w-])node ((bench|scripts)\/\S+?\.(mjs|ts|cjs))/gm;
const NPX = /npx node ((bench|scripts)\/[\w./-]+?\.(mjs|ts|cjs))/g;

for (const page of ['README.md', 'bench/README.md', 'bench/soak.md', 'CONTRIBUTING.md']) {
  t.test(page, async (t) => {
    const text = fs.readFileSync(path.join(root, page), 'utf8');
    t.same(
      [...text.matchAll(BARE)].map((m) => m[1]),
      [],
      'no script run by a bare node',
    );
    for (const [, file] of text.matchAll(NPX)) t.ok(fs.existsSync(path.join(root, file!)), `${file} exists`);
  });
}

t.test("npx node is the project's Node 24, whatever node is first on PATH", async (t) => {
  const PATH = (process.env.PATH ?? '')
    .split(':')
    .filter((d) => !d.includes('node_modules'))
    .join(':');
  const r = spawnSync('npx', ['--no-install', 'node', '-p', 'process.versions.node.split(".")[0]'], {
    cwd: root,
    encoding: 'utf8',
    env: { ...process.env, PATH: `${path.dirname(process.execPath)}:${PATH}`, NODE_OPTIONS: '' },
  });
  t.equal(r.stdout.trim(), '24', r.stderr);
  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
  t.equal(pkg.engines.node, '>=24');
  t.match(fs.readFileSync(path.join(root, 'README.md'), 'utf8'), /asks for Node 24 \(`engines`\)/);
});
