// The run directory must be root's alone.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { checkPrivate, ensureRunDir, recordsDir } from '../../src/watch/run-dir.ts';

t.test('created 0700 with its records directory; an existing private one is accepted', async (t) => {
  const run = path.join(t.testdir({}), 'run/envhook');
  t.equal(ensureRunDir(run), recordsDir(run));
  t.equal(fs.statSync(run).mode & 0o777, 0o700);
  t.equal(fs.statSync(recordsDir(run)).mode & 0o777, 0o700);
  t.equal(ensureRunDir(run), recordsDir(run), 'idempotent');
  fs.chmodSync(run, 0o755);
  t.doesNotThrow(() => ensureRunDir(run), 'readable by others is fine; writable is not');
});

t.test('refused: writable by group or others, another owner, a symlink, missing', async (t) => {
  const dir = t.testdir({});
  const msg = (d: string) => `run directory ${d} must be owned by root and not writable by group or others`;
  const shared = path.join(dir, 'shared');
  fs.mkdirSync(shared);
  fs.chmodSync(shared, 0o770);
  t.throws(() => ensureRunDir(shared), { message: msg(shared) });
  const theirs = path.join(dir, 'theirs');
  fs.mkdirSync(theirs, { mode: 0o700 });
  fs.chownSync(theirs, 1000, 1000);
  t.throws(() => ensureRunDir(theirs), { message: msg(theirs) });
  const ok = path.join(dir, 'ok');
  ensureRunDir(ok);
  fs.chmodSync(recordsDir(ok), 0o777);
  t.throws(() => ensureRunDir(ok), { message: msg(recordsDir(ok)) }, 'the records directory too');
  fs.symlinkSync(ok, path.join(dir, 'link'));
  t.throws(() => checkPrivate(path.join(dir, 'link')), { message: `run directory ${path.join(dir, 'link')} is not a directory` });
  t.throws(() => checkPrivate(path.join(dir, 'none')), { message: `run directory ${path.join(dir, 'none')} does not exist` });
});
