import t from 'tap';
import fs from 'node:fs';
import { copyDir, placeOf, podCopiesDir, timestampedName, checkOwnDir } from '../../src/mirror/layout.ts';
import { isTimestampedName } from '../../src/fs/datadir.ts';

t.test('paths from checked names only', async (t) => {
  t.equal(copyDir({ runDir: '/run/envhook', podUid: 'ab-12', volume: 'keys' }), '/run/envhook/volumes/ab-12/keys');
  t.throws(() => podCopiesDir('/r', '../x'), { message: 'pod UID "../x" cannot name an owned copy' });
  t.throws(() => copyDir({ runDir: '/r', podUid: 'p', volume: '..data' }), { message: 'volume "..data" cannot name an owned copy' });
  t.same(placeOf('/run/envhook', '/run/envhook/volumes/p/keys/tls'), { podUid: 'p', volume: 'keys', rest: 'tls' });
  t.same(placeOf('/run/envhook', '/run/envhook/volumes/p/keys'), { podUid: 'p', volume: 'keys', rest: '' });
  t.equal(placeOf('/run/envhook', '/var/lib/kubelet/pods/p/volumes/kubernetes.io~secret/keys'), undefined);
  t.equal(placeOf('/run/envhook', '/run/envhook/volumes/p'), undefined);
});

t.test("the kubelet's timestamped names", async (t) => {
  const n = timestampedName(new Date(Date.UTC(2026, 10, 27, 3, 4, 5)));
  t.match(n, /^\.\.2026_11_27_03_04_05\.\d+$/);
  t.ok(isTimestampedName(n));
});

t.test('the directories above a copy', async (t) => {
  const dir = t.testdir({ d: {} });
  fs.chmodSync(`${dir}/d`, 0o755);
  t.doesNotThrow(() => checkOwnDir('d', fs.lstatSync(`${dir}/d`), false));
  t.throws(() => checkOwnDir('d', fs.lstatSync(`${dir}/d`), true), { message: 'd must be owned by root and closed to group and others' });
  fs.chmodSync(`${dir}/d`, 0o777);
  t.throws(() => checkOwnDir('d', fs.lstatSync(`${dir}/d`), false), {
    message: 'd must be owned by root and not writable by group and others',
  });
  t.throws(() => checkOwnDir('d', undefined, false), { message: 'd does not exist' });
});
