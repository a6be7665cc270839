// stdin read whole and bounded (a hook's state, Podman's config), from a pipe as the runtime gives it.
import t from 'tap';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { NODE, REPO } from '../helpers/bundle.ts';

const read = (input: string, limit: number) =>
  spawnSync(
    NODE,
    [
      '--input-type=module',
      '-e',
      `import { readStdin } from ${JSON.stringify(path.join(REPO, 'src/fs/stdin.ts'))};
try { process.stdout.write(readStdin(${limit}, 'config')); } catch (e) { process.stdout.write('ERR ' + e.message); }`,
    ],
    { input, encoding: 'utf8', env: { ...process.env, NODE_EXTRA_CA_CERTS: '' } },
  );

t.test('all of stdin, up to the limit', async (t) => {
  const big = 'x'.repeat(200 * 1024);
  t.equal(read(big, 1024 * 1024).stdout, big, 'more than one 64 KiB read');
  t.equal(read('', 10).stdout, '', 'empty');
  t.equal(read('é{}', 10).stdout, 'é{}', 'UTF-8');
  t.equal(read('x'.repeat(11), 10).stdout, 'ERR config on stdin is larger than 10 bytes');
});
