// removeFile: a file install wrote whole is taken back as it was (removed, or the file it replaced
// put back); a file the admin changed since stays theirs, unless something would still run it.
import t, { type Test } from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { makeLayout } from '../../src/install/layout.ts';
import { sha256 } from '../../src/install/fsops.ts';
import { removeFile } from '../../src/install/remove-file.ts';

const WROTE = Buffer.from('written by install\n');

function node(t: Test, files: Record<string, string>) {
  const root = t.testdir();
  for (const [file, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    fs.writeFileSync(path.join(root, file), text);
  }
  return makeLayout('containerd', { root, prefix: '/srv/envhook' });
}

t.test('unchanged since install: removed, and what it replaced comes back from the backup', async (t) => {
  const layout = node(t, { '/etc/x.conf': WROTE.toString(), '/srv/envhook/backup/etc/x.conf': 'the admin\n' });
  const c = removeFile(layout, '/etc/x.conf', sha256(WROTE), []);
  t.same(c.before, WROTE);
  t.equal(c.after?.toString(), 'the admin\n', 'the original is what stays');
  t.equal(c.dropBackup, true, 'and its backup goes');
  t.equal(c.note, undefined);
});

t.test('unchanged, nothing replaced: removed outright; already gone: nothing to do', async (t) => {
  const layout = node(t, { '/etc/x.conf': WROTE.toString() });
  t.match(removeFile(layout, '/etc/x.conf', sha256(WROTE), []), { before: WROTE, after: undefined, dropBackup: false });
  t.match(removeFile(layout, '/etc/gone.conf', sha256(WROTE), []), { before: undefined, after: undefined });
});

t.test('changed by the admin, not runnable: left in place, and the note says where the original is', async (t) => {
  const layout = node(t, { '/etc/x.conf': 'edited\n', '/srv/envhook/backup/etc/x.conf': 'the admin\n' });
  const c = removeFile(layout, '/etc/x.conf', sha256(WROTE), []);
  t.equal(c.after?.toString(), 'edited\n', 'the edit stays');
  t.equal(c.note, 'changed since install: left in place; the original is in /srv/envhook/backup/etc/x.conf');
  t.equal(c.saveAs, undefined);
});

t.test('changed and still naming a file uninstall removes, or executable: moved aside, numbered past earlier ones', async (t) => {
  const layout = node(t, {
    '/opt/nri/plugins/50-envhook': 'exec /srv/envhook/envhook nri --edited\n',
    '/srv/envhook/backup/opt/nri/plugins/50-envhook.edited': 'an earlier uninstall\n',
    '/usr/local/bin/tool': 'edited\n',
  });
  const c = removeFile(layout, '/opt/nri/plugins/50-envhook', sha256(WROTE), ['/opt/nri/plugins/50-envhook', '/srv/envhook/envhook']);
  t.equal(c.after, undefined, 'nothing runnable is left where the runtime looks');
  t.equal(c.saveAs, '/srv/envhook/backup/opt/nri/plugins/50-envhook.edited.2');
  t.equal(
    c.note,
    'changed since install, and it runs /srv/envhook/envhook, which uninstall removes: moved to /srv/envhook/backup/opt/nri/plugins/50-envhook.edited.2 (mode 0600: nothing starts it)',
  );
  fs.chmodSync(layout.real('/usr/local/bin/tool'), 0o755);
  t.match(
    removeFile(layout, '/usr/local/bin/tool', sha256(WROTE), []).note,
    /^changed since install, and an executable envhook placed: moved to /,
  );
});
