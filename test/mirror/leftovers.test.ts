// Leftover owned copies (src/mirror/leftovers.ts) on real directories: copies of pods and of
// volumes the kubelet removed, and a copy's partial entries (a timestamped directory or swap link
// `..data` does not point at, a copy with no `..data`), by age; the payload `..data` points at,
// and anything a symbolic link leads to, are never touched.
import t, { type Test } from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { atomicWrite, makeAtomicVolume, makePod } from '../../scripts/kubelet-pod.ts';
import { copyVolume } from '../../src/mirror/copy.ts';
import { copyDir } from '../../src/mirror/layout.ts';
import {
  copiedVolumes,
  findPartials,
  kubeletHasVolume,
  removeGoneCopies,
  removePartials,
  removeSettled,
} from '../../src/mirror/leftovers.ts';

const OWNERS = { defaultOwner: { hostUid: 1000 }, items: new Map() };
const CANARY = 'CANARY-leftovers-never-elsewhere';

function node(t: Test) {
  const dir = t.testdir({});
  const root = path.join(dir, 'kubelet');
  const runDir = path.join(dir, 'run');
  const pod = (uid: string, volumes: string[]) => {
    const p = makePod(root, {}, uid);
    const dirs = volumes.map((v) => makeAtomicVolume(p, 'secret', v, { key: { data: CANARY, mode: 0o400 } }));
    volumes.forEach((volume, i) => copyVolume({ runDir, podUid: uid, volume }, dirs[i]!, OWNERS));
    return { dir: p.dir, vols: dirs };
  };
  return { dir, root, runDir, pod };
}

t.test("a pod's copies go with its directory, a volume's with the kubelet's volume directory; the rest stays", async (t) => {
  const n = node(t);
  const gone = n.pod('pod-gone', ['a', 'b']);
  const job = n.pod('pod-job', ['a', 'b']);
  const live = n.pod('pod-live', ['a']);
  fs.rmSync(gone.dir, { recursive: true });
  fs.rmSync(job.vols[0]!, { recursive: true }); // the kubelet tore one volume down, the pod directory stays
  t.ok(kubeletHasVolume(job.dir, 'b'));
  t.notOk(kubeletHasVolume(job.dir, 'a'));
  t.same(
    removeGoneCopies(n.runDir, n.root).sort((x, y) => x.podUid.localeCompare(y.podUid)),
    [
      { podUid: 'pod-gone', why: 'pod directory is gone' },
      { podUid: 'pod-job', volume: 'a', why: "the kubelet's volume directory is gone" },
    ],
  );
  t.same(fs.readdirSync(path.join(n.runDir, 'volumes')).sort(), ['pod-job', 'pod-live']);
  t.same(copiedVolumes(n.runDir, 'pod-job'), ['b']);
  t.equal(fs.readFileSync(path.join(copyDir({ runDir: n.runDir, podUid: 'pod-live', volume: 'a' }), 'key'), 'utf8'), CANARY);
  fs.rmSync(job.vols[1]!, { recursive: true });
  t.same(removeGoneCopies(n.runDir, n.root), [{ podUid: 'pod-job', volume: 'b', why: "the kubelet's volume directory is gone" }]);
  t.same(fs.readdirSync(path.join(n.runDir, 'volumes')), ['pod-live'], "the pod's directory of copies goes with its last copy");
  t.same(removeGoneCopies(n.runDir, n.root), [], 'nothing more');
  t.ok(fs.existsSync(live.vols[0]!), "the kubelet's files are never touched");
});

t.test('a symbolic link or a name that cannot be a pod UID under volumes/ is not followed', async (t) => {
  const n = node(t);
  n.pod('pod-a', ['a']);
  const outside = path.join(n.dir, 'outside');
  fs.mkdirSync(path.join(outside, 'x'), { recursive: true });
  fs.symlinkSync(outside, path.join(n.runDir, 'volumes', 'pod-link'));
  fs.mkdirSync(path.join(n.runDir, 'volumes', '..bad'));
  fs.symlinkSync(outside, path.join(copyDir({ runDir: n.runDir, podUid: 'pod-a', volume: 'a' }), '..2020_01_01_00_00_00.1'));
  const r = removeGoneCopies(n.runDir, n.root);
  t.same(r, [], 'a link is no pod of copies, and ..bad is no pod UID');
  const partials = findPartials(n.runDir);
  t.same(
    partials.map((p) => p.name),
    ['..2020_01_01_00_00_00.1'],
  );
  removePartials(partials, Date.now() + 60_000);
  t.ok(fs.existsSync(path.join(outside, 'x')), "a link's target is left alone");
  t.notOk(
    fs.existsSync(path.join(copyDir({ runDir: n.runDir, podUid: 'pod-a', volume: 'a' }), '..2020_01_01_00_00_00.1')),
    'the link is removed',
  );
});

t.test('partial entries: removed when settled, the payload `..data` points at never; a copy with no `..data` goes whole', async (t) => {
  const n = node(t);
  const { vols } = n.pod('pod-a', ['a', 'b']);
  const a = copyDir({ runDir: n.runDir, podUid: 'pod-a', volume: 'a' });
  const b = copyDir({ runDir: n.runDir, podUid: 'pod-a', volume: 'b' });
  const current = fs.readlinkSync(path.join(a, '..data'));
  // What a process killed while it copied leaves: a timestamped directory with part of a payload,
  // and the swap's link; a copy whose first payload never came has no `..data`.
  fs.mkdirSync(path.join(a, '..2026_11_29_06_00_00.42'), { mode: 0o700 });
  fs.writeFileSync(path.join(a, '..2026_11_29_06_00_00.42', 'key'), CANARY, { mode: 0o600 });
  fs.symlinkSync('..2026_11_29_06_00_00.42', path.join(a, '..data_tmp.7'));
  fs.rmSync(path.join(b, '..data'));
  const found = findPartials(n.runDir);
  t.same(found.map((p) => [p.place.volume, p.name]).sort(), [
    ['a', '..2026_11_29_06_00_00.42'],
    ['a', '..data_tmp.7'],
    ['b', undefined],
  ]);
  const early = removePartials(found, Date.now(), 60_000);
  t.same(early.removed, [], 'all changed in the last minute: none removed yet');
  t.equal(early.young.length, 3);
  // One of them changes (another process still writing it): it is not removed at the second look.
  await new Promise((r) => setTimeout(r, 20));
  fs.writeFileSync(path.join(a, '..2026_11_29_06_00_00.42', 'more'), 'x');
  fs.utimesSync(path.join(a, '..2026_11_29_06_00_00.42'), new Date(), new Date());
  const settled = removeSettled(early.young);
  t.same(settled.map((p) => [p.place.volume, p.name]).sort(), [
    ['a', '..data_tmp.7'],
    ['b', undefined],
  ]);
  t.ok(fs.existsSync(path.join(a, '..2026_11_29_06_00_00.42')), 'the one that changed is kept');
  t.notOk(fs.existsSync(b), 'the copy with no ..data is removed');
  t.equal(fs.readlinkSync(path.join(a, '..data')), current);
  t.equal(fs.readFileSync(path.join(a, 'key'), 'utf8'), CANARY, 'the payload ..data points at is whole');
  const late = removePartials(findPartials(n.runDir), Date.now() + 60_000, 60_000);
  t.same(
    late.removed.map((p) => p.name),
    ['..2026_11_29_06_00_00.42'],
    'unchanged for the settle time: removed',
  );
  t.same(fs.readdirSync(a).sort(), ['..data', current, 'key'].sort());
  t.ok(fs.existsSync(vols[0]!), "the kubelet's volume is left alone");
});

t.test('a payload retired by a swap whose process ended is a partial entry too', async (t) => {
  const n = node(t);
  const { vols } = n.pod('pod-a', ['a']);
  const place = { runDir: n.runDir, podUid: 'pod-a', volume: 'a' };
  const first = fs.readlinkSync(path.join(copyDir(place), '..data'));
  atomicWrite(vols[0]!, { key: { data: `${CANARY}-2`, mode: 0o400 } });
  copyVolume(place, vols[0]!, OWNERS); // retires `first` for 2 s: this test ends before
  t.ok(fs.existsSync(path.join(copyDir(place), first)), 'the replaced payload is still there');
  const r = removePartials(findPartials(n.runDir), Date.now() + 10_000);
  t.same(
    r.removed.map((p) => p.name),
    [first],
  );
  t.equal(fs.readFileSync(path.join(copyDir(place), 'key'), 'utf8'), `${CANARY}-2`);
});
