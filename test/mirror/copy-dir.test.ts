import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { openCopyDir } from '../../src/mirror/copy-dir.ts';

t.test('made root-only above the copy, 0755 at the copy, whatever the umask', async (t) => {
  const runDir = path.join(t.testdir({}), 'run');
  const old = process.umask(0o077);
  try {
    fs.closeSync(openCopyDir({ runDir, podUid: 'p', volume: 'v' }));
  } finally {
    process.umask(old);
  }
  const mode = (p: string) => fs.statSync(path.join(runDir, p)).mode & 0o777;
  t.same([mode('volumes'), mode('volumes/p'), mode('volumes/p/v')], [0o700, 0o700, 0o755]);
  fs.closeSync(openCopyDir({ runDir, podUid: 'p', volume: 'v' }));
  t.pass('opened again as it is');
});

t.test('a run directory writable by others is refused', async (t) => {
  const runDir = path.join(t.testdir({}), 'run');
  fs.mkdirSync(runDir, { mode: 0o777 });
  fs.chmodSync(runDir, 0o777);
  t.throws(() => openCopyDir({ runDir, podUid: 'p', volume: 'v' }), {
    message: `run directory ${runDir} must be owned by root and not writable by group and others`,
  });
});
