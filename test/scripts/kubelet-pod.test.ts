// The shared pod fixture lays volumes out as the kubelet's atomic writer does, updates included.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { atomicWrite, timestampedName } from '../../scripts/kubelet-pod.ts';

t.test('layout: ..data, timestamped dir, visible top-level symlinks', async (t) => {
  const vol = path.join(t.testdir({}), 'vol');
  const ts = atomicWrite(vol, { a: 'A', 'sub/deep/b': { data: 'B', mode: 0o400 } });
  t.match(path.basename(ts), /^\.\.\d{4}_\d\d_\d\d_\d\d_\d\d_\d\d\.\d+$/);
  t.equal(fs.readlinkSync(path.join(vol, '..data')), path.basename(ts));
  t.equal(fs.readlinkSync(path.join(vol, 'a')), '..data/a');
  t.equal(fs.readlinkSync(path.join(vol, 'sub')), '..data/sub');
  t.same(fs.readdirSync(vol).sort(), ['..data', path.basename(ts), 'a', 'sub'].sort());
  t.equal(fs.readFileSync(path.join(vol, 'sub/deep/b'), 'utf8'), 'B');
  t.equal(fs.statSync(path.join(ts, 'sub/deep/b')).mode & 0o777, 0o400);
  t.equal(fs.statSync(ts).mode & 0o777, 0o755);
});

t.test('an update swaps ..data, prunes old names and the old directory', async (t) => {
  const vol = path.join(t.testdir({}), 'vol');
  const old = atomicWrite(vol, { a: 'A', gone: 'G' });
  const ts = atomicWrite(vol, { a: 'A2', c: 'C' });
  t.not(ts, old);
  t.notOk(fs.existsSync(old));
  t.same(fs.readdirSync(vol).sort(), ['..data', path.basename(ts), 'a', 'c'].sort());
  t.equal(fs.readFileSync(path.join(vol, 'a'), 'utf8'), 'A2');
  t.throws(() => atomicWrite(vol, { '../x': 'x' }));
  t.match(timestampedName(new Date(Date.UTC(2026, 10, 22, 3, 20, 0))), /^\.\.2026_11_22_03_20_00\.\d+$/);
});

t.test("the kubelet's order: files, ..data swap, then visible links, pruning, old dir removal", async (t) => {
  const vol = path.join(t.testdir({}), 'vol');
  const old = atomicWrite(vol, { a: 'A', gone: 'G' });
  const seen: string[] = [];
  const ts = atomicWrite(
    vol,
    { a: 'A2', 'n/new': { data: 'N', mode: 0o400, uid: 1234 } },
    {
      beforeRename: (dir) => {
        seen.push('beforeRename');
        t.equal(fs.readlinkSync(path.join(vol, '..data')), path.basename(old), 'before the swap ..data is the old dir');
        t.equal(fs.readFileSync(path.join(dir, 'n/new'), 'utf8'), 'N', 'every file written before the swap');
        t.equal(fs.statSync(path.join(dir, 'n/new')).mode & 0o777, 0o400);
        t.equal(fs.statSync(path.join(dir, 'n/new')).uid, 1234, 'FsUser applied as the file is written');
        t.equal(fs.statSync(path.join(dir, 'n/new')).gid, 0, 'group left as is');
        t.notOk(fs.existsSync(path.join(vol, '..data_tmp')));
      },
      afterRename: (dir) => {
        seen.push('afterRename');
        t.equal(fs.readlinkSync(path.join(vol, '..data')), path.basename(dir));
        t.notOk(fs.lstatSync(path.join(vol, 'n'), { throwIfNoEntry: false }), 'new visible names come after the swap');
        t.ok(fs.lstatSync(path.join(vol, 'gone')), 'pruning comes after the swap');
        t.ok(fs.existsSync(old), 'the old dir is removed last');
      },
    },
  );
  t.same(seen, ['beforeRename', 'afterRename']);
  t.same(fs.readdirSync(vol).sort(), ['..data', path.basename(ts), 'a', 'n'].sort());
  t.equal(fs.readlinkSync(path.join(vol, 'n')), '..data/n');
});

t.test('an unchanged payload writes nothing; a removed nested path is a change', async (t) => {
  const vol = path.join(t.testdir({}), 'vol');
  const first = atomicWrite(vol, { a: 'A', 'sub/x': 'X', 'sub/y': 'Y' });
  t.equal(atomicWrite(vol, { a: 'A', 'sub/x': 'X', 'sub/y': 'Y' }, { beforeRename: () => t.fail('no write') }), first);
  t.equal(fs.readlinkSync(path.join(vol, '..data')), path.basename(first));
  const second = atomicWrite(vol, { a: 'A', 'sub/x': 'X' });
  t.not(second, first);
  t.notOk(fs.existsSync(path.join(second, 'sub/y')));
  t.same(fs.readdirSync(vol).sort(), ['..data', path.basename(second), 'a', 'sub'].sort());
});
