// New timestamped directories: held open and watched (bounded, nested, closed), each entry an
// event names handed over at once; real inotify, real files, the kernel's own counts.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { PendingDirs } from '../../src/watch/pending.ts';
import { createInotify } from '../../src/watch/inotify.ts';
import { openPending, type OpenPending } from '../../src/watch/pass.ts';
import { silentLogger } from '../../src/log.ts';
import { inotifyWatches } from '../helpers/watch/inotify.ts';
import { waitFor } from '../helpers/wait.ts';

const openFds = () => fs.readdirSync('/proc/self/fd').length;

function setup(dir: string, max = 2, kinds: Record<string, 'file' | 'directory'> = {}) {
  let marks = 0;
  let limits = 0;
  const entries: string[] = [];
  const inotify = createInotify(silentLogger);
  const target = { volume: 'keys', dir, defaultOwner: undefined, items: new Map() };
  const p = new PendingDirs(dir, {
    inotify,
    pod: 'p1',
    max,
    open: (name) => openPending(target, name),
    onEntry: (name: string, _d: OpenPending, rel: string) => {
      entries.push(`${name}/${rel}`);
      return kinds[rel] ?? (fs.lstatSync(path.join(dir, name, rel), { throwIfNoEntry: false })?.isDirectory() ? 'directory' : 'file');
    },
    mark: () => void marks++,
    onLimit: () => void limits++,
  });
  return { p, inotify, entries, marks: () => marks, limits: () => limits };
}

t.test('at most `max` new directories; the oldest is dropped first, descriptors and watches with it', async (t) => {
  const dir = t.testdir({
    '..2026_11_23_20_00_00.1': { sub: { deep: {} } },
    '..2026_11_23_20_00_00.2': {},
    '..2026_11_23_20_00_00.3': {},
    '..not-the-kubelets': {},
  });
  fs.watch(dir).close(); // the process's one inotify descriptor, opened by its first watch
  const before = inotifyWatches();
  const fds = openFds();
  const s = setup(dir);
  t.equal(s.p.adopt('..2026_11_23_20_00_00.1'), 'adopted');
  t.equal(s.p.watches, 3, 'the directory and its existing subdirectories');
  t.equal(openFds() - fds, 1, 'one descriptor: the directory');
  t.ok(s.p.get('..2026_11_23_20_00_00.1'));
  t.equal(s.p.adopt('..2026_11_23_20_00_00.2'), 'adopted');
  t.equal(s.p.adopt('..2026_11_23_20_00_00.3'), 'adopted');
  t.notOk(s.p.has('..2026_11_23_20_00_00.1'), 'the oldest is dropped');
  t.equal(s.p.watches, 2);
  t.equal(inotifyWatches() - before, 2, 'the kernel agrees');
  t.equal(openFds() - fds, 2);
  t.equal(s.p.adopt('..2026_11_23_20_00_00.9'), 'gone', 'a directory that is not there');
  t.equal(s.p.adopt('..not-the-kubelets'), 'gone', 'a name the kubelet never makes');
  s.p.prune();
  t.equal(s.p.watches, 2, 'prune keeps what is still there');
  fs.rmSync(path.join(dir, '..2026_11_23_20_00_00.2'), { recursive: true });
  s.p.prune();
  t.notOk(s.p.has('..2026_11_23_20_00_00.2'), 'and lets go of a removed directory');
  t.equal(openFds() - fds, 1);
  s.p.close();
  t.equal(s.p.watches, 0);
  t.equal(inotifyWatches(), before);
  t.equal(openFds(), fds, 'every descriptor closed');
});

t.test('each created entry is handed over as its event comes; a subdirectory is watched and due a whole pass', async (t) => {
  const dir = t.testdir({ '..2026_11_23_20_00_00.1': {} });
  const s = setup(dir);
  t.teardown(() => s.p.close());
  s.p.adopt('..2026_11_23_20_00_00.1');
  fs.writeFileSync(path.join(dir, '..2026_11_23_20_00_00.1/token'), 'x');
  await waitFor(() => s.entries.includes('..2026_11_23_20_00_00.1/token'), 5000, 'file event');
  t.equal(s.marks(), 0, 'a file needs no pass');
  t.same(s.p.drain(), []);
  fs.mkdirSync(path.join(dir, '..2026_11_23_20_00_00.1/tls'));
  await waitFor(() => s.marks() > 0, 5000, 'directory event');
  t.equal(s.p.watches, 2, 'tls is watched');
  t.same(s.p.drain(), ['..2026_11_23_20_00_00.1'], 'and the directory is due a whole pass');
  fs.writeFileSync(path.join(dir, '..2026_11_23_20_00_00.1/tls/server.key'), 'x');
  await waitFor(() => s.entries.includes('..2026_11_23_20_00_00.1/tls/server.key'), 5000, 'nested file event, with its path');
  fs.symlinkSync('/etc', path.join(dir, '..2026_11_23_20_00_00.1/link'));
  await waitFor(() => s.entries.includes('..2026_11_23_20_00_00.1/link'), 5000, 'symlink event');
  t.equal(s.p.watches, 2, 'a symlink to a directory is not watched');
  for (let i = 0; i < 40; i++) fs.mkdirSync(path.join(dir, `..2026_11_23_20_00_00.1/d${i}`));
  await waitFor(() => s.entries.filter((e) => /\/d\d+$/.test(e)).length === 40, 5000, 'forty directories');
  t.ok(s.p.watches <= 34, `subdirectories are capped (${s.p.watches})`);
  t.equal(s.limits(), 0);
});
