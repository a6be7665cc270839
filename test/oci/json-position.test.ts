// Positions in an admin's JSON file: the first syntax error and a top-level key, as line:column
// (what `envhook status` and every command print for /etc/envhook/config.json), whatever V8's
// message gives.
import t from 'tap';
import { jsonKeyAt, jsonSyntaxErrorAt, positionAt } from '../../src/oci/json-position.ts';

t.test('the first syntax error, with or without a position in V8 message', async (t) => {
  const cases: [string, number, number][] = [
    ['{\n  "kubeletRoot": /var/lib/kubelet\n}', 2, 18], // "Unexpected token": no position given
    ['hello', 1, 1],
    ['[1, x]', 1, 5],
    ['{\n  "logLevel": "info",\n}', 3, 1], // a trailing comma: V8 gives the position
    ['{"logLevel": "info"', 1, 20], // ends early: the end
    ['', 1, 1],
    ['{"a": "b\nc"}', 1, 9], // a raw newline in a string
    ['{"a": 1}\n}', 2, 1],
  ];
  for (const [text, line, column] of cases) t.same(jsonSyntaxErrorAt(text), { line, column }, JSON.stringify(text));
  t.equal(jsonSyntaxErrorAt('{"a": [1, {"b": null}]}'), undefined, 'valid JSON: none');
});

t.test('a top-level key: its opening quote, not a nested key or a string value of that name', async (t) => {
  const text = '{\n  "x": {"logLevel": 1},\n  "y": "logLevel",\n  "logLevel": "loud"\n}';
  t.same(jsonKeyAt(text, 'logLevel'), { line: 4, column: 3 });
  t.same(jsonKeyAt('{"a\\"b": 1}', 'a"b'), { line: 1, column: 2 }, 'escapes read');
  t.equal(jsonKeyAt(text, 'nriIndex'), undefined);
});

t.test('positionAt counts from 1', async (t) => {
  t.same(positionAt('ab\ncd', 0), { line: 1, column: 1 });
  t.same(positionAt('ab\ncd', 4), { line: 2, column: 2 });
});
