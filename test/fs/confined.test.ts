import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import net from 'node:net';
import { execFileSync } from 'node:child_process';
import {
  openConfined,
  openConfinedUnless,
  openRootDir,
  readBounded,
  readConfined,
  splitRelative,
  ConfinedError,
} from '../../src/fs/confined.ts';

const reason = (fn: () => unknown): string => {
  try {
    fn();
  } catch (err) {
    if (err instanceof ConfinedError) return err.reason;
    throw err;
  }
  return 'no error';
};

t.test('relative paths only, no ..', async (t) => {
  t.same(splitRelative('a/./b//c'), ['a', 'b', 'c']);
  t.equal(
    reason(() => splitRelative('/etc/passwd')),
    'path must be relative',
  );
  t.equal(
    reason(() => splitRelative('a/../../b')),
    "path must not contain '..'",
  );
  t.equal(
    reason(() => splitRelative('.')),
    'path is empty',
  );
  t.equal(
    reason(() => splitRelative('a\0b')),
    'path contains a NUL byte',
  );
});

t.test('reads regular files, refuses every other kind and every symlink', async (t) => {
  const outside = t.testdir({ 'secret.txt': 'outside' });
  const dir = t.testdir({
    vol: {
      'ok.env': "A='1'\n",
      sub: { 'nested.env': "B='2'\n" },
      'link.env': t.fixture('symlink', path.join(outside, 'secret.txt')),
      'inner-link.env': t.fixture('symlink', 'ok.env'),
      'loop.env': t.fixture('symlink', 'loop.env'),
      linkdir: t.fixture('symlink', outside),
      adir: {},
      'big.env': '',
    },
  });
  const vol = path.join(dir, 'vol');
  execFileSync('mkfifo', [path.join(vol, 'fifo.env')]);
  fs.truncateSync(path.join(vol, 'big.env'), 1024 ** 3);
  // A unix socket path must fit in 108 bytes: bind in a short directory, then move it in.
  const short = fs.mkdtempSync('/tmp/eh-');
  t.teardown(() => fs.rmSync(short, { recursive: true, force: true }));
  const server = net.createServer().listen(path.join(short, 's'));
  t.teardown(() => server.close());
  await new Promise((r) => server.once('listening', r));
  fs.renameSync(path.join(short, 's'), path.join(vol, 'sock.env'));

  t.equal(readConfined(vol, 'ok.env', 100).toString(), "A='1'\n");
  t.equal(readConfined(vol, 'sub/nested.env', 100).toString(), "B='2'\n");
  t.equal(
    reason(() => readConfined(vol, 'link.env', 100)),
    'is a symbolic link',
  );
  t.equal(
    reason(() => readConfined(vol, 'inner-link.env', 100)),
    'is a symbolic link',
  );
  t.equal(
    reason(() => readConfined(vol, 'loop.env', 100)),
    'is a symbolic link',
  );
  t.equal(
    reason(() => readConfined(vol, 'linkdir/secret.txt', 100)),
    'a path element is a symbolic link',
  );
  t.equal(
    reason(() => readConfined(vol, 'adir', 100)),
    'is a directory',
  );
  t.equal(
    reason(() => readConfined(vol, 'fifo.env', 100)),
    'is a FIFO',
  );
  t.equal(
    reason(() => readConfined(vol, 'sock.env', 100)),
    'is a socket',
  );
  t.equal(
    reason(() => readConfined(vol, 'ok.env/x', 100)),
    'a path element is not a directory',
  );
  t.equal(
    reason(() => readConfined(vol, 'missing.env', 100)),
    'not found',
  );
  t.equal(
    reason(() => readConfined(vol, 'nodir/missing.env', 100)),
    'not found',
  );
  const reads = t.capture(fs, 'readSync', fs.readSync);
  t.equal(
    reason(() => readConfined(vol, 'big.env', 65536)),
    'larger than 65536 bytes',
  );
  const bytesRead = reads().reduce((n, c) => n + ('returned' in c ? c.returned : 0), 0);
  t.ok(bytesRead <= 65537, `a 1 GiB sparse file is refused without being read past the limit (${bytesRead} bytes read)`);
});

t.test('known: a regular file the caller holds costs one lstat; every other kind is refused as before', async (t) => {
  const outside = t.testdir({ 'secret.txt': 'outside' });
  const dir = t.testdir({
    'ok.env': "A='1'\n",
    sub: { 'nested.env': "B='2'\n" },
    'link.env': t.fixture('symlink', path.join(outside, 'secret.txt')),
    adir: {},
  });
  execFileSync('mkfifo', [path.join(dir, 'fifo.env')]);
  const fd = openRootDir(dir);
  t.teardown(() => fs.closeSync(fd));
  const asked: fs.Stats[] = [];
  const yes = (st: fs.Stats) => (asked.push(st), true);
  const opens = t.capture(fs, 'openSync', fs.openSync);
  t.equal(openConfinedUnless(fd, ['ok.env'], yes), undefined, 'known: nothing opened, nothing read');
  t.equal(opens().length, 0, 'not even an O_PATH handle');
  t.equal(asked[0]?.ino, fs.statSync(path.join(dir, 'ok.env')).ino, 'asked with the stat of the very file');
  t.equal(openConfinedUnless(fd, ['sub', 'nested.env'], yes), undefined, 'a deeper file: known after the checked walk');
  t.ok(opens().length > 0, 'the walk opens each directory');
  for (const [name, why] of [
    ['link.env', 'is a symbolic link'],
    ['fifo.env', 'is a FIFO'],
    ['adir', 'is a directory'],
    ['missing.env', 'not found'],
  ] as const) {
    t.equal(
      reason(() => openConfinedUnless(fd, [name], yes)),
      why,
      `${name}: whatever known would answer`,
    );
  }
  const file = openConfinedUnless(fd, ['ok.env'], () => false)!;
  t.teardown(() => fs.closeSync(file.fd));
  t.equal(readBounded(file, 100).toString(), "A='1'\n", 'not known: opened and read');
});

t.test('devices are refused without being opened', async (t) => {
  t.equal(
    reason(() => readConfined('/dev', 'zero', 100)),
    'is a character device',
  );
  t.equal(
    reason(() => readConfined('/dev', 'null', 100)),
    'is a character device',
  );
});

t.test('a file growing past the limit after stat is still cut off', async (t) => {
  const dir = t.testdir({ 'f.env': 'x'.repeat(10) });
  t.equal(
    reason(() => readConfined(dir, 'f.env', 9)),
    'larger than 9 bytes',
  );
  t.equal(readConfined(dir, 'f.env', 10).length, 10);
});

t.test('the buffer fits the file, and grows with a file that grows while it is read', async (t) => {
  // 40000 bytes: more than half of any Buffer pool, so the read gets an ArrayBuffer of its own.
  const dir = t.testdir({ 'f.env': 'x'.repeat(40000), 'g.env': 'y'.repeat(10) });
  const file = readConfined(dir, 'f.env', 65536);
  t.equal(file.length, 40000);
  t.equal(file.buffer.byteLength, 40001, "the file's size and one byte to see it grow, not the limit's 64 KiB");

  const grows = openConfined(dir, 'g.env');
  try {
    fs.appendFileSync(path.join(dir, 'g.env'), 'z'.repeat(5000));
    const bytes = readBounded(grows, 65536);
    t.equal(bytes.toString(), 'y'.repeat(10) + 'z'.repeat(5000), 'every byte written after the fstat is read');
  } finally {
    fs.closeSync(grows.fd);
  }

  const past = openConfined(dir, 'g.env');
  try {
    fs.appendFileSync(path.join(dir, 'g.env'), 'z'.repeat(70000));
    t.equal(
      reason(() => readBounded(past, 65536)),
      'larger than 65536 bytes',
      'growing past the limit after the fstat is refused',
    );
  } finally {
    fs.closeSync(past.fd);
  }
});
