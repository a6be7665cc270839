// The resident processes' sweep of leftover owned copies (src/watch/leftover-sweep.ts): a real
// process copying a volume over and over is killed with SIGKILL, and the next start removes what
// it left (its partial and retired payloads) once they have settled, keeping the payload `..data`
// points at whole; the lines name pods, volumes and counts, never a byte of a file.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { makeAtomicVolume, makePod } from '../../scripts/kubelet-pod.ts';
import { createLogger } from '../../src/log.ts';
import { DATA_LINK } from '../../src/fs/datadir.ts';
import { copyDir } from '../../src/mirror/layout.ts';
import { sweepAtStart, sweepAtStartInSlices, sweepGoneCopies } from '../../src/watch/leftover-sweep.ts';
import { COMPILE_CACHE_ENV } from '../helpers/compile-cache.ts';
import { untapped } from '../helpers/untapped.ts';
import { waitFor } from '../helpers/wait.ts';

const CANARY = 'CANARY-sweep-5c2d-never-logged';
const logLines = (file: string) =>
  fs.existsSync(file)
    ? fs
        .readFileSync(file, 'utf8')
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l))
    : [];

t.test('a process killed while it copies: the next start removes its partial and retired payloads once settled', async (t) => {
  const dir = t.testdir({});
  const root = path.join(dir, 'kubelet');
  const runDir = path.join(dir, 'run');
  const pod = makePod(root, {}, 'pod-k');
  const payload: Record<string, { data: string; mode: number }> = {};
  for (let i = 0; i < 400; i++) payload[`k${i}`] = { data: `${CANARY}-${i}-${'x'.repeat(2000)}`, mode: 0o400 };
  const vol = makeAtomicVolume(pod, 'secret', 'keys', payload);
  const place = { runDir, podUid: 'pod-k', volume: 'keys' };
  const copy = copyDir(place);
  // The resident process's copy, run again and again in a loop (no turn of the event loop: the
  // payloads each swap replaces are never retired), until SIGKILL.
  const script = `import { copyVolume } from ${JSON.stringify(path.resolve('src/mirror/copy.ts'))};
    const place = ${JSON.stringify(place)};
    for (;;) copyVolume(place, ${JSON.stringify(vol)}, { defaultOwner: { hostUid: 1000 }, items: new Map() });`;
  const [cmd, args] = untapped(process.execPath, ['--input-type=module', '-e', script]);
  const child = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, ...COMPILE_CACHE_ENV } });
  const entries = () => (fs.existsSync(copy) ? fs.readdirSync(copy).filter((n) => n.startsWith('..') && n !== DATA_LINK) : []);
  // Three payload directories (a `..data_tmp` link of a swap under way is no payload: counted, it
  // let the kill come with one payload left beside the current one, once in a clean-clone run).
  const payloads = () => entries().filter((n) => !n.startsWith(`${DATA_LINK}_tmp.`));
  await waitFor(() => payloads().length >= 3, 60_000, 'a few copies made'); // a bound against a hang, not a timing check
  child.kill('SIGKILL');
  await new Promise((r) => child.once('exit', r));
  const current = fs.readlinkSync(path.join(copy, DATA_LINK));
  const left = entries().filter((n) => n !== current);
  t.ok(left.length >= 2, `the killed process left payloads no ..data points at (${left.length})`);

  const logFile = path.join(dir, 'log');
  const log = createLogger(logFile, 'debug');
  // As if all but the newest were left a minute before this start: those are removed at once,
  // the newest (being written when the process was killed) is looked at again settleMs later.
  const byAge = left.map((n) => [n, fs.lstatSync(path.join(copy, n)).mtimeMs] as const).sort((a, b) => a[1] - b[1]);
  const newest = byAge.at(-1)![0];
  const aMinuteAgo = new Date(Date.now() - 60_000);
  for (const [n] of byAge.slice(0, -1)) fs.lutimesSync(path.join(copy, n), aMinuteAgo, aMinuteAgo);
  fs.lutimesSync(path.join(copy, newest), new Date(), new Date());
  const sweep = sweepAtStart({ runDir, kubeletRoot: root, log }, 2000);
  t.teardown(() => sweep.close());
  t.same(entries().sort(), [current, newest].sort(), 'the settled ones removed at once, the newest kept for now');
  await waitFor(() => entries().length === 1, 10_000, 'the newest removed at the second look');
  t.same(entries(), [current]);
  t.equal(fs.readFileSync(path.join(copy, 'k7'), 'utf8'), payload.k7!.data, 'the payload ..data points at is whole');
  t.equal(fs.statSync(path.join(copy, 'k7')).uid, 1000);
  const removed = logLines(logFile).filter((l) => l.msg === 'partial owned copy removed');
  t.same(
    removed.map((l) => [l.podUid, l.volume, l.why]),
    [
      ['pod-k', 'keys', 'left by a copy that did not finish'],
      ['pod-k', 'keys', 'left by a copy that did not finish'],
    ],
    'one line at the start, one at the second look',
  );
  t.equal(removed[0].entries + removed[1].entries, left.length, 'every entry counted');
  t.notMatch(fs.readFileSync(logFile, 'utf8'), CANARY, 'no content logged');
});

t.test('gone copies: one line each, with the pod, the volume and why', async (t) => {
  const dir = t.testdir({});
  const root = path.join(dir, 'kubelet');
  const runDir = path.join(dir, 'run');
  for (const uid of ['pod-a', 'pod-b']) {
    makePod(root, {}, uid);
    fs.mkdirSync(copyDir({ runDir, podUid: uid, volume: 'keys' }), { recursive: true });
    fs.symlinkSync('..2026_11_29_06_00_00.1', path.join(copyDir({ runDir, podUid: uid, volume: 'keys' }), DATA_LINK));
  }
  makeAtomicVolume({ dir: path.join(root, 'pods', 'pod-b') }, 'secret', 'keys', { key: CANARY });
  fs.rmSync(path.join(root, 'pods', 'pod-a'), { recursive: true });
  const logFile = path.join(dir, 'log');
  sweepGoneCopies({ runDir, kubeletRoot: root, log: createLogger(logFile, 'debug'), prefix: 'nri: ' });
  t.same(
    logLines(logFile).map((l) => [l.msg, l.podUid, l.volume, l.why]),
    [["nri: pod's owned copies removed", 'pod-a', undefined, 'pod directory is gone']],
  );
  t.same(fs.readdirSync(path.join(runDir, 'volumes')), ['pod-b'], 'the copy whose kubelet volume is there stays');
});

// The NRI worker's start: the same sweep pod by pod, in slices of the loop that answers the
// runtime. Many pods: the gone ones' copies, a torn-down volume's copy and settled partial entries
// removed, the live copies kept whole, and the loop turned before the sweep was done.
t.test('the sweep in slices: every pod looked at, the loop turning between slices', async (t) => {
  const dir = t.testdir({});
  const root = path.join(dir, 'kubelet');
  const runDir = path.join(dir, 'run');
  const aMinuteAgo = new Date(Date.now() - 60_000);
  const uids = Array.from({ length: 300 }, (_, i) => `pod-${String(i).padStart(3, '0')}`);
  for (const uid of uids) {
    const pod = makePod(root, {}, uid);
    makeAtomicVolume(pod, 'secret', 'keys', { key: CANARY });
    const copy = copyDir({ runDir, podUid: uid, volume: 'keys' });
    fs.mkdirSync(path.join(copy, '..2026_11_29_06_00_00.1'), { recursive: true });
    fs.symlinkSync('..2026_11_29_06_00_00.1', path.join(copy, DATA_LINK));
    const partial = path.join(copy, '..2026_11_29_06_00_01.2');
    fs.mkdirSync(partial);
    fs.utimesSync(partial, aMinuteAgo, aMinuteAgo);
  }
  for (const uid of uids.filter((_, i) => i % 3 === 0)) fs.rmSync(path.join(root, 'pods', uid), { recursive: true });
  // Young partial entries (a copy being made as the worker was killed): looked at again later.
  const young = uids
    .filter((_, i) => i % 3 === 1)
    .map((uid) => path.join(copyDir({ runDir, podUid: uid, volume: 'keys' }), '..data_tmp.9'));
  for (const y of young) fs.symlinkSync('..2026_11_29_06_00_00.1', y);
  const there = (p: string) => fs.lstatSync(p, { throwIfNoEntry: false }) !== undefined;
  const logFile = path.join(dir, 'log');
  const sweep = sweepAtStartInSlices({ runDir, kubeletRoot: root, log: createLogger(logFile, 'info'), prefix: 'nri: ' }, 3000);
  t.teardown(() => sweep.close());
  let turned = false;
  setImmediate(() => (turned = true));
  await sweep.done;
  t.ok(turned, 'the loop turned before the sweep was done');
  const lines = logLines(logFile);
  t.equal(lines.filter((l) => l.msg === "nri: pod's owned copies removed" && l.why === 'pod directory is gone').length, 100, 'gone pods');
  t.equal(lines.filter((l) => l.msg === 'nri: partial owned copy removed').length, 200, "live pods' settled partial entries");
  const left = fs.readdirSync(path.join(runDir, 'volumes')).sort();
  t.same(
    left,
    uids.filter((_, i) => i % 3 !== 0),
    'the live pods keep their copies',
  );
  t.ok(young.every(there), 'the young entries kept for now');
  await waitFor(() => !young.some(there), 15_000, 'the young entries removed at the second look');
  t.same(
    fs.readdirSync(copyDir({ runDir, podUid: 'pod-001', volume: 'keys' })).sort(),
    ['..2026_11_29_06_00_00.1', DATA_LINK].sort(),
    'the payload ..data points at kept',
  );

  t.notMatch(fs.readFileSync(logFile, 'utf8'), CANARY, 'no content logged');
});

t.test("the sweep in slices: a gone pod's copy of thousands of files removed without holding the loop", async (t) => {
  const dir = t.testdir({});
  const root = path.join(dir, 'kubelet');
  const runDir = path.join(dir, 'run');
  const files = (at: string) => {
    fs.mkdirSync(at, { recursive: true });
    for (let i = 0; i < 6000; i++) fs.writeFileSync(path.join(at, `k${i}`), CANARY);
  };
  // The same removal in one go, for the bound below.
  files(path.join(dir, 'whole'));
  const started = performance.now();
  fs.rmSync(path.join(dir, 'whole'), { recursive: true });
  const whole = performance.now() - started;
  const copy = copyDir({ runDir, podUid: 'pod-gone', volume: 'keys' });
  files(path.join(copy, '..2026_11_29_06_00_00.1'));
  fs.symlinkSync('..2026_11_29_06_00_00.1', path.join(copy, DATA_LINK));
  let turns = 0;
  let last = performance.now();
  let gap = 0;
  const ticker = setInterval(() => {
    turns++;
    gap = Math.max(gap, performance.now() - last);
    last = performance.now();
  }, 1);
  const sweep = sweepAtStartInSlices({ runDir, kubeletRoot: root, log: createLogger(path.join(dir, 'log'), 'info'), prefix: 'nri: ' });
  t.teardown(() => sweep.close());
  await sweep.done;
  clearInterval(ticker);
  t.notOk(fs.existsSync(path.dirname(copy)), "the gone pod's copies removed");
  // In one go the timer could not run until the end (at most once); in slices of 10 ms it runs
  // between them. (The longest gap depends on this disk's slowest unlink: reported, not judged.)
  t.ok(
    turns >= 5,
    `the loop turned ${turns} times during the removal; longest gap ${gap.toFixed(1)} ms (in one go: ${whole.toFixed(0)} ms)`,
  );
});
