// A snapshot written and swapped in, without a kubelet volume: modes applied after the owner
// (a chown clears set-id bits), the timestamped directory as the kubelet's, the replaced payload
// retired (readable for a while, then removed), leftovers removed.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { writeCopy as write } from '../../src/mirror/build.ts';
import { drain } from '../../src/mirror/steps.ts';
import type { CopyPlace } from '../../src/mirror/layout.ts';
import { waitFor } from '../helpers/wait.ts';
import type { Snapshot } from '../../src/mirror/snapshot.ts';

const snapshot = (data: string): Snapshot & { content: Record<string, string> } => ({
  content: { run: data, 'd/x': 'x' },
  volume: 'v',
  root: { mode: 0o755, uid: 0, gid: 0 },
  dev: 0,
  entries: [
    { rel: 'run', kind: 'file', mode: 0o4750, uid: 1000, gid: 44, size: data.length },
    { rel: 'd', kind: 'dir', mode: 0o750, uid: 0, gid: 44, size: 0 },
    { rel: 'd/x', kind: 'file', mode: 0o400, uid: 1000, gid: 0, size: 1 },
  ],
  visible: ['run', 'd'],
  files: 2,
  bytes: data.length + 1,
});

/** writeCopy in one go, with each file's content from the snapshot's `content` (file-copy.ts copies the kubelet's files). */
function writeCopy(place: CopyPlace, snap: ReturnType<typeof snapshot>, source?: string, retireMs?: number) {
  const fill = function* (e: Snapshot['entries'][number], fd: number) {
    fs.writeSync(fd, snap.content[e.rel]!);
    yield;
  };
  return drain(write(place, snap, fill, { source, retireMs }));
}

t.test('owner, group and mode as planned, set-id bits kept; the old directory retired, stale leftovers removed', async (t) => {
  const place = { runDir: path.join(t.testdir({}), 'run'), podUid: 'p', volume: 'v' };
  const first = writeCopy(place, snapshot('one'));
  const st = fs.statSync(path.join(first.dir, 'run'));
  t.same([st.uid, st.gid, st.mode & 0o7777], [1000, 44, 0o4750]);
  const d = fs.statSync(path.join(first.dir, 'd'));
  t.same([d.uid, d.gid, d.mode & 0o7777], [0, 44, 0o750]);
  t.equal(fs.statSync(path.join(first.dir, first.timestamped)).mode & 0o7777, 0o755);
  // A leftover of a writer that died an hour ago, and a fresh one that may be another writer's.
  const stale = path.join(first.dir, '..2020_01_01_00_00_00.1');
  const fresh = path.join(first.dir, '..2020_01_01_00_00_00.2');
  fs.mkdirSync(stale);
  fs.mkdirSync(fresh);
  fs.utimesSync(stale, new Date(Date.now() - 3_600_000), new Date(Date.now() - 3_600_000));
  const second = writeCopy(place, snapshot('two'), undefined, 300);
  t.same(fs.readdirSync(first.dir).sort(), ['..data', first.timestamped, second.timestamped, path.basename(fresh), 'd', 'run'].sort());
  t.equal(fs.readFileSync(path.join(first.dir, 'run'), 'utf8'), 'two');
  // A reader that resolved ..data just before the swap still reads the old payload.
  t.equal(fs.readFileSync(path.join(first.dir, first.timestamped, 'run'), 'utf8'), 'one', 'the replaced payload stays readable');
  await waitFor(() => !fs.existsSync(path.join(first.dir, first.timestamped)), 5000, 'the replaced payload removed');
  t.same(fs.readdirSync(first.dir).sort(), ['..data', second.timestamped, path.basename(fresh), 'd', 'run'].sort(), 'then removed');
});

t.test('a retired payload counts as changed at its swap: a quick next swap keeps it even when it was written long before', async (t) => {
  const place = { runDir: path.join(t.testdir({}), 'run'), podUid: 'p', volume: 'v' };
  const first = writeCopy(place, snapshot('one'));
  const hourAgo = new Date(Date.now() - 3_600_000);
  fs.utimesSync(path.join(first.dir, first.timestamped), hourAgo, hourAgo); // current for an hour
  const second = writeCopy(place, snapshot('two'), undefined, 60_000);
  writeCopy(place, snapshot('three'), undefined, 60_000);
  const names = fs.readdirSync(first.dir);
  t.ok(names.includes(first.timestamped) && names.includes(second.timestamped), 'both replaced payloads are still there');
  t.equal(fs.readFileSync(path.join(first.dir, first.timestamped, 'run'), 'utf8'), 'one');
});

t.test(
  "the copy's directory takes the kubelet's name when free (its ..data then says which payload it holds), else a fresh one",
  async (t) => {
    const place = { runDir: path.join(t.testdir({}), 'run'), podUid: 'p', volume: 'v' };
    const kubelet = '..2026_11_27_09_30_00.1803941377';
    const first = writeCopy(place, snapshot('one'), kubelet);
    t.equal(first.timestamped, kubelet);
    t.equal(fs.readlinkSync(path.join(first.dir, '..data')), kubelet);
    const again = writeCopy(place, snapshot('two'), kubelet); // another container's start, same payload: the name is taken
    t.not(again.timestamped, kubelet);
    t.equal(fs.readFileSync(path.join(first.dir, 'run'), 'utf8'), 'two');
    t.not(writeCopy(place, snapshot('three'), '../escape').timestamped, '../escape', 'not a kubelet name: a fresh one');
  },
);
