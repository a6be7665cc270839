// One key changed in place: only its line, in its own table, comment, indentation and line
// endings kept; put back exactly; refused where the key is not a line of its own table.
import t from 'tap';
import { applyEdit, planKeyEdit, revertEdit } from '../../src/install/key-edit.ts';

const NRI = ['plugins', 'io.containerd.nri.v1.nri'];

t.test('the line in its table changes, a same-named key elsewhere does not; revert gives the bytes back', async (t) => {
  const text = [
    '[plugins."io.containerd.other"]',
    '  disable = true',
    "[ plugins . 'io.containerd.nri.v1.nri' ]  # NRI",
    '\tdisable   =  true   # off for now',
    '  socket_path = "/run/nri.sock"',
    '[plugins."io.containerd.nri.v1.nri".extra]',
    '  disable = true',
    '',
  ].join('\r\n');
  const edit = planKeyEdit('f', text, NRI, 'disable', 'false');
  t.ok(edit);
  t.equal(edit!.from, '\tdisable   =  true   # off for now\r');
  t.equal(edit!.to, '\tdisable   =  false   # off for now\r');
  const after = applyEdit(text, edit!)!;
  t.equal(after, text.replace('true   #', 'false   #'));
  t.equal(revertEdit(after, edit!), text);
  t.equal(revertEdit(text, edit!), undefined, 'not there: nothing to put back');
});

t.test('no disable line: one added after the header, indented as the table; removed again', async (t) => {
  const text = '[plugins."io.containerd.nri.v1.nri"]\n    plugin_path = "/srv"\n';
  const edit = planKeyEdit('f', text, NRI, 'disable', 'false')!;
  t.same(edit, { file: 'f', table: NRI, key: 'disable', from: null, to: '    disable = false' });
  const after = applyEdit(text, edit)!;
  t.equal(after, '[plugins."io.containerd.nri.v1.nri"]\n    disable = false\n    plugin_path = "/srv"\n');
  t.equal(revertEdit(after, edit), text);
  const crlf = text.replaceAll('\n', '\r\n');
  t.equal(
    applyEdit(crlf, planKeyEdit('f', crlf, NRI, 'disable', 'false')!),
    after.replaceAll('\n', '\r\n'),
    'a CRLF file keeps its line endings',
  );
});

t.test('refused where the key is not a line of its own table', async (t) => {
  for (const text of [
    '[plugins]\n  "io.containerd.nri.v1.nri" = { disable = true }\n',
    '[plugins]\n  "io.containerd.nri.v1.nri".disable = true\n',
    'version = 2\n',
  ]) {
    t.equal(planKeyEdit('f', text, NRI, 'disable', 'false'), undefined, JSON.stringify(text));
  }
});
