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

t.test('fields a pod author wrote are escaped in the log line (bidi, format characters), the rest kept', async (t) => {
  const file = path.join(t.testdir(), 'envhook.log');
  const log = createLogger(file, 'debug');
  log.warn({ name: 'a\u202eb', source: { path: ['x\u2066y'] }, n: 3, err: new Error('foreign') }, 'skipped');
  const text = fs.readFileSync(file, 'utf8');
  t.notMatch(text, /[\u202e\u2066]/u, 'no raw format character');
  const line = JSON.parse(text.trim()) as Record<string, unknown>;
  t.match(line, { name: 'a\\u202eb', source: { path: ['x\\u2066y'] }, n: 3, err: { name: 'Error' }, msg: 'skipped' });
});
