// The exec sidecar's Node half: the original env's compact text found in config.json as
// written (compact or pretty, Go's escapes kept), and the sidecar file: one field a line.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { compactEnvText, EXEC_SIDECAR, writeExecSidecar } from '../../src/bundle/exec-sidecar.ts';

const ENV = ['PATH=/usr/bin:/bin', 'Q="quoted" \\ back', 'HTML=<a&b>', 'NL=line\nline', "APOS=it's"];
const goText = (v: unknown, indent?: number) =>
  JSON.stringify(v, null, indent).replace(/&/g, '\\u0026').replace(/</g, '\\u003c').replace(/>/g, '\\u003e');

t.test('compactEnvText: the array as written, whitespace outside strings dropped', async (t) => {
  const compact = goText({ process: { env: ENV } });
  t.equal(compactEnvText(compact, ENV), goText(ENV), 'compact config.json: Go escapes (\\u0026 \\u003c) kept');
  const pretty = goText({ hooks: { prestart: [{ path: '/h', env: ['H=1'] }] }, process: { args: ['x'], env: ENV } }, 4);
  t.equal(compactEnvText(pretty, ENV), goText(ENV), 'pretty-printed, after a hook env that differs');
  t.equal(compactEnvText(pretty.replace('"env": [', '"env" :\r\n [ '), ENV), goText(ENV), 'odd whitespace around the colon and bracket');
  t.equal(compactEnvText(goText({ process: { env: ENV.slice(1) } }), ENV), undefined, 'another env: none');
  t.equal(compactEnvText(goText({ process: { args: ['"env":[]'] } }), []), undefined, 'an "env" inside a string is no key');
  t.equal(compactEnvText(goText({ process: { env: [1, 'A=b'] } }), ['1', 'A=b']), undefined, 'not strings: none');
  t.equal(compactEnvText('{"process":{"env":["A=b"', ['A=b']), undefined, 'truncated: none');
  t.equal(compactEnvText(goText({ process: { env: [] } }), []), '[]', 'an empty env');
});

t.test('writeExecSidecar: 0600, one field a line (the front swaps them with awk: test/hooks/front-exec.test.ts)', async (t) => {
  const dir = t.testdir({});
  const original = goText({ process: { env: ENV } }, 2);
  const mark = { set: ['APOS', 'NEW'], removed: ['HTML'] };
  const final = [...ENV.filter((e) => !e.startsWith('HTML=')), 'NEW=x\'y"z\\'];
  t.ok(writeExecSidecar({ bundle: dir, id: "it's-1", original, originalEnv: ENV, finalEnv: final, mark, where: 'config.json' }));
  const file = path.join(dir, EXEC_SIDECAR);
  t.equal(fs.statSync(file).mode & 0o777, 0o600);
  const [format, id, from, to, rest] = fs.readFileSync(file, 'utf8').split('\n');
  t.equal(format, 'envhook exec sidecar 1', 'the format line the front checks');
  t.equal(id, "it's-1", 'the container id');
  t.equal(from, goText(ENV), 'from, the compact original');
  t.same(JSON.parse(to!), ['PATH=/usr/bin:/bin', 'Q="quoted" \\ back', 'NL=line\nline', "APOS=it's", 'NEW=x\'y"z\\'], 'to, the exec env');
  t.equal(rest, '', 'four lines, nothing after');
  t.notOk(
    writeExecSidecar({
      bundle: path.join(dir, 'none'),
      id: 'a\nb',
      original,
      originalEnv: ENV,
      finalEnv: final,
      mark,
      where: 'config.json',
    }),
    'an id of two lines: nothing written',
  );
  t.notOk(
    writeExecSidecar({
      bundle: dir,
      id: 'x',
      original: '{"process":{}}',
      originalEnv: [],
      finalEnv: ['A=1'],
      mark: { set: ['A'], removed: [] },
      where: 'config.json',
    }),
    'no env array in config.json: nothing written',
  );
});
