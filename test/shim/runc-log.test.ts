// envhook's error line in runc's --log file, in the file's format.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { appendRuncLog, runcLogLine } from '../../src/shim/runc-log.ts';

const at = new Date(Date.UTC(2026, 10, 23, 20, 0, 0, 123));

t.test('json for --log-format json, logrus text otherwise', async (t) => {
  t.same(JSON.parse(runcLogLine('envhook: x "y"', 'json', at)), { level: 'error', msg: 'envhook: x "y"', time: '2026-11-23T20:00:00Z' });
  t.equal(runcLogLine('envhook: x "y"', undefined, at), 'time="2026-11-23T20:00:00Z" level=error msg="envhook: x \\"y\\""\n');
});

t.test('appended; no file, or one that cannot be written, is not an error', async (t) => {
  const dir = t.testdir({});
  const file = path.join(dir, 'log.json');
  appendRuncLog(file, 'json', 'envhook: one');
  appendRuncLog(file, 'json', 'envhook: two');
  t.same(
    fs
      .readFileSync(file, 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l).msg),
    ['envhook: one', 'envhook: two'],
  );
  t.doesNotThrow(() => appendRuncLog(undefined, 'json', 'x'));
  t.doesNotThrow(() => appendRuncLog(path.join(dir, 'no/such/dir/log'), 'json', 'x'));
});
