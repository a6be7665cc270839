// The other-UID helpers themselves: nobody reaches the directory, runs Node and the bundled
// code there, wherever the checkout lives; a directory in the way is named.
import t from 'tap';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { moduleIn, nodeAsOther, otherUidDir, unreachableReason } from './other-uid.ts';

const root = process.getuid?.() === 0 ? undefined : 'needs root (spawns as nobody)';

t.test('nobody runs Node and code from src/ in the directory', { skip: root }, async (t) => {
  const dir = otherUidDir(t, 'helper');
  t.equal(fs.statSync(dir).mode & 0o777, 0o755);
  t.equal(path.dirname(dir), os.tmpdir(), 'under os.tmpdir(), not the checkout');
  const mod = moduleIn(dir, 'errors.ts');
  const r = nodeAsOther(dir, 65534, [
    '--input-type=module',
    '-e',
    `import { EnvhookError } from ${JSON.stringify(
      mod,
    )}; console.log(process.getuid(), process.cwd(), typeof EnvhookError, process.env.NODE_OPTIONS)`,
  ]);
  t.equal(r.error, undefined);
  t.equal(r.stderr, '');
  t.equal(r.stdout, `65534 ${dir} function undefined\n`, "as nobody, in the directory, without the runner's NODE_OPTIONS");
});

t.test('a directory only root can enter is named as the reason', async (t) => {
  const closed = t.testdir({ inner: {} });
  fs.chmodSync(closed, 0o700);
  t.equal(unreachableReason(path.join(closed, 'inner')), `${fs.realpathSync(closed)} (mode 0700) is not searchable by other users`);
  fs.chmodSync(closed, 0o751);
  t.equal(
    unreachableReason(path.join(closed, 'inner')),
    unreachableReason(path.dirname(closed)),
    "searchable: the verdict is the parent's",
  );
});
