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
