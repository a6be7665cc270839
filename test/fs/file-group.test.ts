// The group an admin names for envhook's own files: a GID as is, a name from the group file, and
// a name that is not there refused with the setting named.
import t from 'tap';
import path from 'node:path';
import { fileAccess, groupId } from '../../src/fs/file-group.ts';

t.test('a GID, a name of the group file, or one line naming the setting', async (t) => {
  const dir = t.testdir({ group: 'root:x:0:\nlogs:x:4242:alice,bob\nbroken:x:\n' });
  const file = path.join(dir, 'group');
  t.equal(groupId('4', file), 4);
  t.equal(groupId('logs', file), 4242);
  t.throws(() => groupId('broken', file), {
    message: `fileGroup "broken" (--file-group, ENVHOOK_FILE_GROUP): no such group in ${file}: name a group of the node or its GID`,
  });
  t.throws(() => groupId('nobody-here', path.join(dir, 'none')), { message: /^fileGroup "nobody-here" .*: no such group in / });
  t.same(fileAccess(undefined), { mode: 0o600, gid: undefined });
  t.same(fileAccess('4'), { mode: 0o640, gid: 4 });
});
