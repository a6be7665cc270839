// `envhook --version` and `envhook version` print the same one line, exit 0, nothing on stderr
// (from source: no build, so version 0.0.0-dev and commit unknown); `-V` (commander's default
// short flag) is not an option.
import t from 'tap';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { refused } from '../helpers/refusal.ts';

const root = path.resolve(import.meta.dirname, '../..');
const run = (...args: string[]) =>
  spawnSync(path.join(root, 'node_modules/.bin/node'), [path.join(root, 'src/cli/main.ts'), ...args], {
    encoding: 'utf8',
    timeout: 60_000,
  });

t.test('--version and version: the same line', async (t) => {
  const line = `envhook 0.0.0-dev (unknown; node ${process.versions.node})\n`;
  for (const args of [['--version'], ['version']]) {
    const r = run(...args);
    t.equal(r.status, 0, args.join(' '));
    t.equal(r.stdout, line, args.join(' '));
    t.equal(r.stderr, '', args.join(' '));
  }
  t.match(run('--help').stdout, /^  --version +print the version \(as `envhook version`\)$/m, 'listed in the help');
  const v = run('-V');
  refused(t, v, "envhook: unknown option '-V'\n");
});
