import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { createLogger, silentLogger } from '../src/log.ts';

t.test('no log file: the silent logger, and pino is not loaded', async (t) => {
  t.equal(createLogger(undefined), silentLogger);
  t.equal(createLogger('/nonexistent/x.log', 'silent'), silentLogger);
  t.equal(silentLogger.child({ a: 1 }), silentLogger);
  t.equal(silentLogger.isLevelEnabled('error'), false);
  silentLogger.error({ err: new Error('x') }, 'dropped');
  // Run from source in a fresh process: pino would show in the CommonJS module cache.
  const src = `import { createRequire } from 'node:module';
    import { createLogger } from ${JSON.stringify(path.resolve('src/log.ts'))};
    createLogger(undefined).info('x');
    const cache = createRequire(import.meta.url).cache;
    process.stdout.write(String(Object.keys(cache).some((f) => f.includes('/pino/'))));`;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', src]);
  t.equal(out.toString(), 'false');
});

t.test('with a log file: pino, JSON lines, written synchronously', async (t) => {
  const file = path.join(t.testdir(), 'sub', 'envhook.log');
  const log = createLogger(file, 'debug');
  log.debug({ volume: 'v' }, 'found');
  const line = JSON.parse(fs.readFileSync(file, 'utf8').trim()) as Record<string, unknown>;
  t.match(line, { level: 20, volume: 'v', msg: 'found', pid: process.pid });
});

t.test("the log file is root's alone: made 0600, an older 0644 one narrowed; a device is left as it is", async (t) => {
  const dir = t.testdir();
  const file = path.join(dir, 'new.log');
  const old = process.umask(0o022);
  try {
    createLogger(file, 'info').info({ volume: 'v' }, 'x');
    t.equal(fs.statSync(file).mode & 0o777, 0o600, 'a new file: 0600 under umask 022');
    const older = path.join(dir, 'older.log');
    fs.writeFileSync(older, '{"msg":"before"}\n', { mode: 0o644 });
    fs.chmodSync(older, 0o644);
    createLogger(older, 'info').info('after');
    t.equal(fs.statSync(older).mode & 0o777, 0o600, "an older envhook's 0644 file: 0600");
    t.match(fs.readFileSync(older, 'utf8'), /^\{"msg":"before"\}\n\{.*"msg":"after"\}\n$/, 'appended to, not replaced');
    const before = fs.statSync('/dev/null').mode;
    createLogger('/dev/null', 'info').info('nowhere');
    t.equal(fs.statSync('/dev/null').mode, before, '/dev/null keeps its mode');
  } finally {
    process.umask(old);
  }
});

t.test('fileGroup: the log file 0640 with that group, an older one given it too', async (t) => {
  const dir = t.testdir();
  const file = path.join(dir, 'grouped.log');
  createLogger(file, 'info', { fileGroup: '4' }).info('x');
  t.same([fs.statSync(file).mode & 0o777, fs.statSync(file).gid], [0o640, 4], 'a new file');
  const older = path.join(dir, 'older.log');
  fs.writeFileSync(older, '');
  fs.chmodSync(older, 0o600);
  createLogger(older, 'info', { fileGroup: '4' }).info('x');
  t.same([fs.statSync(older).mode & 0o777, fs.statSync(older).gid], [0o640, 4], 'a 0600 file: the group may read it');
  t.throws(() => createLogger(path.join(dir, 'x.log'), 'info', { fileGroup: 'no-such-group-here' }), {
    message:
      'fileGroup "no-such-group-here" (--file-group, ENVHOOK_FILE_GROUP): no such group in /etc/group: name a group of the node or its GID',
  });
});

t.test('fields a pod author wrote are escaped in the log line (bidi, format characters), the rest kept', async (t) => {
  const file = path.join(t.testdir(), 'envhook.log');
  const log = createLogger(file, 'debug');
  log.warn({ name: 'a\u202eb', source: { path: ['x\u2066y'] }, n: 3, err: new Error('foreign') }, 'skipped');
  const text = fs.readFileSync(file, 'utf8');
  t.notMatch(text, /[\u202e\u2066]/u, 'no raw format character');
  const line = JSON.parse(text.trim()) as Record<string, unknown>;
  t.match(line, { name: 'a\\u202eb', source: { path: ['x\\u2066y'] }, n: 3, err: { name: 'Error' }, msg: 'skipped' });
});
