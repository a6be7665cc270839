import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { defaultCacheDir, safeCacheDir, ROOT_CACHE_DIR } from '../../src/cli/compile-cache.ts';

const uid = process.getuid!();

t.test('root uses /var/cache, others a per-uid directory', async (t) => {
  t.equal(defaultCacheDir(0), ROOT_CACHE_DIR);
  t.match(defaultCacheDir(1000), /envhook-compile-cache-1000$/);
});

t.test('creates a private directory', async (t) => {
  const dir = path.join(t.testdir(), 'a', 'cache');
  t.equal(safeCacheDir(dir, uid), dir);
  t.equal(fs.statSync(dir).mode & 0o777, 0o700);
});

t.test('refuses a symlink, a foreign owner, a writable directory or parent', async (t) => {
  const root = t.testdir({ real: {}, open: {}, parent: { cache: {} } });
  fs.symlinkSync(path.join(root, 'real'), path.join(root, 'link'));
  t.equal(safeCacheDir(path.join(root, 'link'), uid), undefined, 'symlink');
  t.equal(safeCacheDir(path.join(root, 'real'), uid + 1), undefined, 'owner');
  fs.chmodSync(path.join(root, 'open'), 0o777);
  t.equal(safeCacheDir(path.join(root, 'open'), uid), undefined, 'world-writable');
  fs.chmodSync(path.join(root, 'parent'), 0o777);
  t.equal(safeCacheDir(path.join(root, 'parent', 'cache'), uid), undefined, 'parent writable, not sticky');
  fs.chmodSync(path.join(root, 'parent'), 0o1777);
  t.equal(safeCacheDir(path.join(root, 'parent', 'cache'), uid), path.join(root, 'parent', 'cache'), 'sticky parent (like /tmp)');
  t.equal(safeCacheDir('/dev/null/x', uid), undefined, 'cannot create');
});
