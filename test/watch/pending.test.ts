// New timestamped directories' watches: bounded, nested, closed.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { PendingDirs } from '../../src/watch/pending.ts';
import { createInotify } from '../../src/watch/inotify.ts';
import { silentLogger } from '../../src/log.ts';
import { inotifyWatches, waitFor } from '../helpers/inotify.ts';

function setup(dir: string, max = 2) {
  let marks = 0;
  let limits = 0;
  const inotify = createInotify(silentLogger);
  const p = new PendingDirs(dir, { inotify, max, mark: () => void marks++, onLimit: () => void limits++ });
  return { p, inotify, marks: () => marks, limits: () => limits };
}

t.test('at most `max` new directories; the oldest is dropped first', async (t) => {
  const dir = t.testdir({ '..2026_11_23_20_00_00.1': { sub: { deep: {} } }, '..2026_11_23_20_00_00.2': {}, '..2026_11_23_20_00_00.3': {} });
  const before = inotifyWatches();
  const s = setup(dir);
  t.ok(s.p.adopt('..2026_11_23_20_00_00.1'));
  t.equal(s.p.watches, 3, 'the directory and its existing subdirectories');
  t.ok(s.p.adopt('..2026_11_23_20_00_00.2'));
  t.ok(s.p.adopt('..2026_11_23_20_00_00.3'));
  t.notOk(s.p.has('..2026_11_23_20_00_00.1'), 'the oldest is dropped');
  t.equal(s.p.watches, 2);
  t.equal(inotifyWatches() - before, 2, 'the kernel agrees');
  t.same(s.p.drain().sort(), ['..2026_11_23_20_00_00.2', '..2026_11_23_20_00_00.3'], 'adopted directories are due a pass');
  t.same(s.p.drain(), []);
  t.notOk(s.p.adopt('..2026_11_23_20_00_00.9'), 'a directory that is not there');
  s.p.close();
  t.equal(s.p.watches, 0);
  t.equal(inotifyWatches(), before);
});

t.test('events mark the volume; a created subdirectory is watched at the next drain', async (t) => {
  const dir = t.testdir({ '..2026_11_23_20_00_00.1': {} });
  const s = setup(dir);
  t.teardown(() => s.p.close());
  s.p.adopt('..2026_11_23_20_00_00.1');
  s.p.drain();
  fs.mkdirSync(path.join(dir, '..2026_11_23_20_00_00.1/tls'));
  await waitFor(() => s.marks() > 0, 5000, 'event');
  t.same(s.p.drain(), ['..2026_11_23_20_00_00.1']);
  t.equal(s.p.watches, 2, 'tls is watched');
  fs.symlinkSync('/etc', path.join(dir, '..2026_11_23_20_00_00.1/link'));
  await waitFor(() => s.marks() > 1, 5000, 'event');
  s.p.drain();
  t.equal(s.p.watches, 2, 'a symlink to a directory is not watched');
  for (let i = 0; i < 40; i++) fs.mkdirSync(path.join(dir, `..2026_11_23_20_00_00.1/d${i}`));
  await new Promise((r) => setTimeout(r, 100));
  s.p.drain();
  s.p.drain();
  t.ok(s.p.watches <= 34, `subdirectories are capped (${s.p.watches})`);
  t.equal(s.limits(), 0);
});
