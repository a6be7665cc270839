// The directory holding a volume's real files: `..data`'s timestamped target, never followed
// out of the volume; a plain directory is walked itself.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { closeDataDir, isTimestampedName, openDataDir } from '../../src/fs/datadir.ts';
import { EnvhookError } from '../../src/errors.ts';
import { atomicWrite } from '../../scripts/kubelet-pod.ts';

t.test('atomic-writer layout and a plain directory', async (t) => {
  const dir = t.testdir({ plain: { f: 'x' } });
  const vol = path.join(dir, 'vol');
  const ts = atomicWrite(vol, { a: 'A' });
  const d = openDataDir('v', vol);
  t.equal(d.timestamped, path.basename(ts));
  t.same(fs.readdirSync(`/proc/self/fd/${d.fd}`), ['a']);
  closeDataDir(d);
  const p = openDataDir('v', path.join(dir, 'plain'));
  t.equal(p.timestamped, undefined);
  closeDataDir(p);
});

t.test('..data pointing anywhere else is refused', async (t) => {
  const dir = t.testdir({ vol: {}, outside: {} });
  const vol = path.join(dir, 'vol');
  fs.symlinkSync('../outside', path.join(vol, '..data'));
  t.throws(() => openDataDir('v', vol), new EnvhookError('volume "v": ..data does not point to a timestamped directory inside the volume'));
  t.throws(() => openDataDir('v', path.join(dir, 'missing')), { message: /^volume "v": cannot open the volume directory / });
  for (const ok of ['..2026_01_01_00_00_00.1', '..x']) t.ok(isTimestampedName(ok), ok);
  for (const bad of ['..data', '..data_tmp', '..', 'x', '../x', '..a/b']) t.notOk(isTimestampedName(bad), bad);
});
