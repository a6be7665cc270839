import t from 'tap';
import { formatNote, ptr } from '../../src/convert/note.ts';

const base = { file: 'pods/a.yaml', line: 3, column: 7, annotation: 'envhook.io/env' };

t.test("formatNote: lint's finding shape, with or without a JSON path", async (t) => {
  t.equal(formatNote({ ...base, path: '/app/0', message: 'stays native' }), 'pods/a.yaml:3:7: envhook.io/env /app/0: note: stays native');
  t.equal(formatNote({ ...base, path: '', message: 'stays native' }), 'pods/a.yaml:3:7: envhook.io/env: note: stays native');
});

t.test('formatNote: always one line, control characters escaped', async (t) => {
  t.equal(formatNote({ ...base, path: ptr('a\nb', 1), message: 'x\r\ny\tz' }), 'pods/a.yaml:3:7: envhook.io/env /a b/1: note: x y\\u0009z');
});
