// The instance lock's key: the socket's directory as a file (device and inode) and the socket's
// name, the same through any symlink; followed under --root as the node sees it; a directory not
// there yet keyed by the nearest one above it. Two mount namespaces: test/nri/supervisor/main.test.ts.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { resolveUnder, socketKey } from '../../../src/nri/supervisor/socket-identity.ts';

const idOf = (dir: string): string => {
  const st = fs.statSync(dir, { bigint: true });
  return `${st.dev}:${st.ino}:${st.birthtimeNs}`;
};

t.test('one socket by two paths (a symlinked directory, /var/run → /run): one key', async (t) => {
  const dir = t.testdir({ run: { nri: {} } });
  fs.mkdirSync(path.join(dir, 'var'));
  fs.symlinkSync('../run', path.join(dir, 'var', 'run'));
  const real = path.join(dir, 'run', 'nri', 'nri.sock');
  t.equal(socketKey(real), `${idOf(path.join(dir, 'run', 'nri'))}:nri.sock`);
  t.equal(socketKey(path.join(dir, 'var', 'run', 'nri', 'nri.sock')), socketKey(real), 'through the symlink');
  t.equal(socketKey(path.join(dir, 'run', 'nri', '..', 'nri', 'nri.sock')), socketKey(real), '.. resolved');
  t.not(socketKey(path.join(dir, 'run', 'nri', 'other.sock')), socketKey(real), 'another name in the directory: another key');
  if (fs.lstatSync('/var/run').isSymbolicLink() && fs.realpathSync('/var/run') === '/run')
    t.equal(socketKey('/var/run/nri/nri.sock'), socketKey('/run/nri/nri.sock'), "this host's /var/run symlink");
});

t.test('a directory replaced by another at the same path: another key (it is another socket)', async (t) => {
  const dir = t.testdir({ nri: {} });
  const sock = path.join(dir, 'nri', 'nri.sock');
  const before = socketKey(sock);
  fs.renameSync(path.join(dir, 'nri'), path.join(dir, 'old'));
  fs.mkdirSync(path.join(dir, 'nri'));
  t.not(socketKey(sock), before);
});

t.test('a directory removed and another made, which gets the freed inode number: another key', async (t) => {
  const dir = t.testdir({});
  const keys: string[] = [];
  const inodes: bigint[] = [];
  // ext4 and tmpfs hand the freed inode number to the next directory made, at once (seen here
  // every time); the birth time tells the two apart. Tried a few times: the reuse is not promised.
  for (let i = 0; i < 5; i++) {
    const nri = path.join(dir, `nri-${i}`);
    fs.mkdirSync(nri);
    keys.push(socketKey(path.join(nri, 'nri.sock')));
    inodes.push(fs.statSync(nri, { bigint: true }).ino);
    fs.rmdirSync(nri);
    await new Promise((r) => setTimeout(r, 5));
  }
  t.equal(new Set(keys).size, keys.length, `five directories, five keys (inode numbers seen: ${new Set(inodes).size} distinct)`);
  const st = fs.statSync(dir, { bigint: true });
  if (st.birthtimeNs === 0n) t.comment('this file system keeps no birth time: the key is the inode alone here');
});

t.test('a directory not there yet: the nearest existing one and the names below it, through symlinks too', async (t) => {
  const dir = t.testdir({ run: {} });
  fs.symlinkSync('run', path.join(dir, 'link'));
  t.equal(socketKey(path.join(dir, 'run', 'nri', 'nri.sock')), `${idOf(path.join(dir, 'run'))}:nri/nri.sock`);
  t.equal(socketKey(path.join(dir, 'link', 'nri', 'nri.sock')), socketKey(path.join(dir, 'run', 'nri', 'nri.sock')));
  t.same(resolveUnder('/', path.join(dir, 'run', 'a', '..', 'b')), { existing: path.join(dir, 'run'), rest: ['b'] });
  t.same(resolveUnder('/', path.join(dir, 'run', 'a', 'b', '..')), { existing: path.join(dir, 'run'), rest: ['a'] });
});

t.test('under --root: symlinks followed inside the root, an absolute target from the root', async (t) => {
  const root = t.testdir({ run: { nri: {} }, var: {} });
  fs.symlinkSync('/run', path.join(root, 'var', 'run'));
  t.same(resolveUnder(root, '/var/run/nri'), { existing: path.join(root, 'run', 'nri'), rest: [] });
  t.equal(socketKey('/var/run/nri/nri.sock', root), `${idOf(path.join(root, 'run', 'nri'))}:nri.sock`);
  t.equal(socketKey('/var/run/nri/nri.sock', root), socketKey(path.join(root, 'run', 'nri', 'nri.sock')), 'the same file as seen from /');
  fs.symlinkSync('../../..', path.join(root, 'run', 'up'));
  t.same(resolveUnder(root, '/run/up/run/nri'), { existing: path.join(root, 'run', 'nri'), rest: [] }, '.. stops at the root');
});

t.test('a symlink loop: one line, no hang', async (t) => {
  const dir = t.testdir();
  fs.symlinkSync('b', path.join(dir, 'a'));
  fs.symlinkSync('a', path.join(dir, 'b'));
  t.throws(() => socketKey(path.join(dir, 'a', 'nri.sock')), {
    message: `cannot read the NRI socket's directory ${path.join(dir, 'a')}: too many levels of symbolic links`,
  });
});
