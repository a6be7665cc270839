// adminFileChange on real files under a test root: the first mark saves the admin's file, later
// ones only change the marks, another install's marks stay, and once no install marks the file
// the backup comes back byte for byte (or, when the admin edited it since, only envhook's marks go).
import t, { type Test } from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { makeLayout } from '../../src/install/layout.ts';
import { adminFileChange } from '../../src/install/admin-file.ts';
import { withBlock } from '../../src/install/block.ts';
import type { KeyEdit } from '../../src/install/key-edit.ts';
import type { RuntimeRecord } from '../../src/install/state.ts';
import type { BlockTarget } from '../../src/install/targets.ts';

const F = '/etc/containerd/config.toml';
const ADMIN = '# the admin\nversion = 2\n\n[plugins."io.containerd.nri.v1.nri"]\n  disable = true\n';
const block: BlockTarget = { file: F, body: '[x]\nk = 1\n', mode: 0o600, note: 'why here' };
const edit: KeyEdit = {
  file: F,
  table: ['plugins', 'io.containerd.nri.v1.nri'],
  key: 'disable',
  from: '  disable = true',
  to: '  disable = false',
};
const handler: RuntimeRecord = { config: F, files: {}, blocks: [F] };
const nri: RuntimeRecord = { config: F, files: {}, blocks: [], edits: [edit] };
const EDITED = ADMIN.replace('disable = true', 'disable = false');

function rootWith(t: Test, config?: string, backup?: string) {
  const root = t.testdir({});
  const put = (p: string, s: string) => {
    fs.mkdirSync(path.dirname(path.join(root, p)), { recursive: true });
    fs.writeFileSync(path.join(root, p), s);
  };
  if (config !== undefined) put(F, config);
  if (backup !== undefined) put(`/opt/eh/backup${F}`, backup);
  return makeLayout('containerd', { root, prefix: '/opt/eh' });
}
const text = (b: Buffer | undefined) => b?.toString('utf8');

t.test('the first block saves the admin file; a reinstall replaces the block in place, no new backup', async (t) => {
  const l = rootWith(t, ADMIN);
  const first = adminFileChange(l, F, [], { block, edits: [] }, []);
  t.equal(text(first.after), withBlock(ADMIN, block.body, F));
  t.equal(first.backup, true);
  t.equal(first.mode, 0o600);
  t.equal(first.note, 'why here');

  const l2 = rootWith(t, text(first.after));
  const again = adminFileChange(l2, F, [handler], { block: { ...block, body: '[y]\n' }, edits: [] }, []);
  t.equal(text(again.after), withBlock(ADMIN, '[y]\n', F));
  t.equal(again.backup, false);
  const same = adminFileChange(l2, F, [handler], { block, edits: [] }, []);
  t.same(same.after, same.before, 'the same block: nothing changes');
  t.equal(same.note, undefined, 'and nothing to say about it');
});

t.test('a file install creates: no backup; uninstall removes it whole', async (t) => {
  const created = adminFileChange(rootWith(t), F, [], { block, edits: [] }, []);
  t.equal(created.before, undefined);
  t.equal(created.backup, false);
  const gone = adminFileChange(rootWith(t, text(created.after)), F, [handler], undefined, []);
  t.equal(gone.after, undefined);
});

t.test('uninstall: the backup back byte for byte; or, edited since, only the block out and a note', async (t) => {
  const marked = withBlock(ADMIN, block.body, F);
  const back = adminFileChange(rootWith(t, marked, ADMIN), F, [handler], undefined, []);
  t.equal(text(back.after), ADMIN);
  t.equal(back.dropBackup, true);

  const edited = marked.replace('# the admin', '# the admin, later');
  const kept = adminFileChange(rootWith(t, edited, ADMIN), F, [handler], undefined, []);
  t.equal(text(kept.after), ADMIN.replace('# the admin', '# the admin, later'));
  t.equal(kept.dropBackup, undefined);
  t.equal(kept.note, `changed since install: only envhook's block removed; the original is in /opt/eh/backup${F}`);
});

t.test("another install marks the file: only this one's marks go, the backup stays", async (t) => {
  const both = withBlock(EDITED, block.body, F);
  const c = adminFileChange(rootWith(t, both, ADMIN), F, [handler], undefined, [nri]);
  t.equal(text(c.after), EDITED);
  t.equal(c.backup, false);
  t.equal(c.dropBackup, undefined);
  // then the NRI install goes too: its line back, and the file is the backup again
  const last = adminFileChange(rootWith(t, EDITED, ADMIN), F, [nri], undefined, []);
  t.equal(text(last.after), ADMIN);
  t.equal(last.dropBackup, true);
});

t.test('an edited key: put in (saving the admin file), taken out; its line gone is a note, not a failure', async (t) => {
  const put = adminFileChange(rootWith(t, ADMIN), F, [], { block: undefined, edits: [edit] }, []);
  t.equal(text(put.after), EDITED);
  t.equal(put.backup, true);
  t.equal(put.mode, 0o644);

  const changed = ADMIN.replace('disable = true', 'disable = false # mine');
  const c = adminFileChange(rootWith(t, changed, ADMIN), F, [nri], undefined, []);
  t.equal(text(c.after), changed, 'left as it is');
  t.equal(c.note, `changed since install: envhook's line "disable = false" is not there any more; the file is left as it is there`);

  t.throws(() => adminFileChange(rootWith(t, changed), F, [], { block: undefined, edits: [edit] }, []), {
    message: `${F}: the line "disable = true" changed while install ran: run install again`,
  });
});

t.test('the file gone: a backup nothing will put back is dropped, unless another install marks the file', async (t) => {
  const c = adminFileChange(rootWith(t, undefined, ADMIN), F, [handler], undefined, []);
  t.equal(c.before, undefined);
  t.equal(c.after, undefined);
  t.equal(c.dropBackup, true);
  const kept = adminFileChange(rootWith(t, undefined, ADMIN), F, [handler], undefined, [nri]);
  t.equal(kept.dropBackup, undefined);
});
