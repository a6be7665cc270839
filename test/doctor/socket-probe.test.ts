// What is at a socket's path and whether something listens there, with real Unix sockets: one
// listening, one left by a listener killed with SIGKILL, one whose listener is stopped with its
// queue full; a regular file, a directory, nothing, a path through a file, a symlink loop, a path
// too long; a socket in root's directory looked at by nobody (helpers/other-uid.ts).
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { probeSocket } from '../../src/doctor/socket-probe.ts';
import { moduleIn, nodeAsOther, otherUidDir } from '../helpers/other-uid.ts';
import { fullSocketAt, listenAt, shortDir, staleSocketAt } from '../helpers/sockets.ts';

t.test('a socket something listens on: listening', async (t) => {
  const file = path.join(shortDir(t), 'nri.sock');
  const server = await listenAt(t, file);
  let accepted = 0;
  server.on('connection', () => accepted++);
  t.same(await probeSocket(file), { state: 'listening' });
  t.equal(accepted, 1, 'connected once (and closed)');
});

t.test('a socket left by a listener killed with SIGKILL: stale', async (t) => {
  const file = path.join(shortDir(t), 'nri.sock');
  await staleSocketAt(t, file);
  t.ok(fs.statSync(file).isSocket(), 'the socket file is still there');
  t.same(await probeSocket(file), { state: 'stale' });
});

t.test('a listener stopped with its queue full: full, at once', async (t) => {
  const file = path.join(shortDir(t), 'nri.sock');
  await fullSocketAt(t, file);
  t.same(await probeSocket(file), { state: 'full' });
});

t.test('nothing there, a regular file, a directory: what is there, no connection tried', async (t) => {
  const dir = shortDir(t);
  t.same(await probeSocket(path.join(dir, 'nri.sock')), { state: 'absent' });
  fs.writeFileSync(path.join(dir, 'file'), '');
  t.same(await probeSocket(path.join(dir, 'file')), { state: 'not-socket', kind: 'a regular file' });
  t.same(await probeSocket(dir), { state: 'not-socket', kind: 'a directory' });
  t.same(await probeSocket(path.join(dir, 'file/nri.sock')), { state: 'absent' }, 'a path through a file');
  fs.symlinkSync('loop', path.join(dir, 'loop'));
  t.same(await probeSocket(path.join(dir, 'loop')), {
    state: 'failed',
    step: 'look at',
    reason: 'a symbolic link where none is followed, or too many of them (ELOOP)',
  });
});

t.test('a socket reached by a path longer than a socket address holds: too-long, not a failure to connect', async (t) => {
  const dir = shortDir(t);
  const long = 'd'.repeat(110);
  fs.mkdirSync(path.join(dir, long));
  await listenAt(t, path.join(dir, 'nri.sock'));
  const file = `${dir}/${long}/../nri.sock`;
  t.ok(fs.statSync(file).isSocket());
  t.same(await probeSocket(file), { state: 'too-long' });
});

t.test(
  "not root, a socket in root's directory: why, with what to do",
  { skip: process.getuid?.() === 0 ? false : 'needs root (to run as nobody)' },
  async (t) => {
    const dir = otherUidDir(t, 'probe');
    const closed = path.join(dir, 'nri');
    await listenAt(t, path.join(closed, 'nri.sock'));
    fs.chmodSync(closed, 0o700); // as NRI makes its socket's directory
    const mod = moduleIn(dir, 'doctor/socket-probe.ts');
    const script = `import { probeSocket } from ${JSON.stringify(mod)}; console.log(JSON.stringify(await probeSocket(process.argv[1])));`;
    const r = nodeAsOther(dir, 65534, ['--input-type=module', '-e', script, path.join(closed, 'nri.sock')]);
    t.equal(r.stderr, '');
    t.same(JSON.parse(r.stdout), { state: 'failed', step: 'look at', reason: 'permission denied (EACCES): run as root' });
  },
);
