// The copier: owned-copy jobs on this loop in slices, so the loop keeps answering while a job of
// thousands of files runs; one job at a time, in order; a job's deadline refused on time; a job
// stopped by close() cleans up after itself; our errors as their one line only.
import t, { type Test } from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { atomicWrite } from '../../scripts/kubelet-pod.ts';
import { inlineCopier, slicedCopier } from '../../src/mirror/copier.ts';
import { copyDir } from '../../src/mirror/layout.ts';
import { startOf } from '../helpers/mirror/start.ts';
import { waitFor } from '../helpers/wait.ts';

const CANARY = 'CANARY-copier-31f0';
const owners = { defaultOwner: { hostUid: 1000 }, items: new Map<string, { hostUid: number }>() };
const LATE =
  'volume "keys": its owned copy could not be made within the runtime\'s request timeout: give the volume fewer or smaller files, or fewer volumes owners in one container';

function payload(n: number): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i < n; i++) out[`k${i}`] = `${CANARY}-${i}`;
  return out;
}

function setup(t: Test, files: number) {
  const dir = t.testdir({});
  const kubelet = path.join(dir, 'kubelet');
  atomicWrite(kubelet, payload(files));
  const place = { runDir: path.join(dir, 'run'), podUid: 'pod-1', volume: 'keys' };
  return { dir, kubelet, place, copy: copyDir(place) };
}

/** The longest the loop went without running a 1 ms timer while `fn` ran, and whether the working directory was ever not this one. */
async function longestGap<T>(fn: () => Promise<T>): Promise<{ value: T; gap: number; movedCwd: boolean }> {
  const home = process.cwd();
  let last = performance.now();
  let gap = 0;
  let movedCwd = false;
  const ticker = setInterval(() => {
    const now = performance.now();
    gap = Math.max(gap, now - last);
    last = now;
    if (process.cwd() !== home) movedCwd = true;
  }, 1);
  try {
    const value = await fn();
    gap = Math.max(gap, performance.now() - last);
    return { value, gap, movedCwd };
  } finally {
    clearInterval(ticker);
  }
}

t.test('a job of 2,000 files and its removal never hold the loop for more than about a slice', async (t) => {
  const { kubelet, place, copy } = setup(t, 2000);
  // The same copy in one go: how long the loop would be held without the slices.
  const inline = { ...place, podUid: 'pod-inline' };
  const started = performance.now();
  await inlineCopier().copy({ place: inline, kubeletDir: kubelet, owners });
  const whole = performance.now() - started;
  const copier = slicedCopier();
  t.teardown(() => copier.close());
  const made = await longestGap(() => copier.copy({ place, kubeletDir: kubelet, owners }));
  t.match(made.value, { dir: copy, files: 2000, created: true });
  t.equal(fs.readFileSync(path.join(copy, 'k7'), 'utf8'), `${CANARY}-7`);
  t.equal(fs.statSync(path.join(copy, 'k7')).uid, 1000, 'owned in the copy');
  t.equal((fs.statSync(path.join(copy, 'k7')).mode & 0o777).toString(8), '644', "the kubelet's mode");
  // Slices of 10 ms: a bound with a wide margin for a loaded machine, and well under the job in one go.
  t.ok(made.gap < Math.max(100, whole / 3), `longest loop gap ${made.gap.toFixed(1)} ms (the copy in one go: ${whole.toFixed(0)} ms)`);
  t.notOk(made.movedCwd, "the loop never ran in a volume's directory between slices");
  const bytes = Object.values(payload(2000)).reduce((a, v) => a + v.length, 0);
  t.same(copier.stats(), { queued: 0, held: { bytes: bytes * 2, files: 4000, copies: 2 } }, 'what the copies hold, measured after the job');
  const removed = await longestGap(() => copier.removePod(place.runDir, place.podUid));
  t.equal(removed.value, true, 'the pod removed');
  t.notOk(fs.existsSync(path.dirname(copy)));
  t.ok(removed.gap < Math.max(100, whole / 3), `longest loop gap ${removed.gap.toFixed(1)} ms while removing 2,000 files`);
  t.equal(await copier.removePod(place.runDir, place.podUid), false, 'nothing left to remove');
});

t.test('one job at a time, in order: a removal posted after a copy runs after it', async (t) => {
  const { kubelet, place, copy } = setup(t, 300);
  const copier = slicedCopier();
  t.teardown(() => copier.close());
  const order: string[] = [];
  const copied = copier.copy({ place, kubeletDir: kubelet, owners }).then(() => order.push('copy'));
  t.equal(copier.stats().queued, 1, 'the job waits for the next microtask: never run inside the call');
  const removed = copier.removeCopy(place).then((r) => order.push(`remove ${r}`));
  await Promise.all([copied, removed]);
  t.same(order, ['copy', 'remove true']);
  t.notOk(fs.existsSync(copy));
});

t.test('a start goes ahead of the rewrites waiting, never of a removal or another start posted before it', async (t) => {
  const { kubelet, place } = setup(t, 20);
  const copier = slicedCopier();
  t.teardown(() => copier.close());
  const at = (pod: string) => ({ ...place, podUid: pod });
  await copier.copy({ place: at('c'), kubeletDir: kubelet, owners });
  const order: string[] = [];
  const far = () => process.hrtime.bigint() + 600_000_000_000n;
  const done = [
    copier.removePod(place.runDir, 'c').then(() => order.push('remove c')),
    copier.copy({ place: at('a'), kubeletDir: kubelet, owners }).then(() => order.push('rewrite a')),
    copier.copy({ place: at('b'), kubeletDir: kubelet, owners }).then(() => order.push('rewrite b')),
    copier.copy({ place: at('d'), kubeletDir: kubelet, owners, deadline: far() }).then(() => order.push('start d')),
    copier.copy({ place: at('e'), kubeletDir: kubelet, owners, deadline: far() }).then(() => order.push('start e')),
  ];
  await Promise.all(done);
  t.same(order, ['remove c', 'start d', 'start e', 'rewrite a', 'rewrite b']);
  t.match(copier.stats(), { queued: 0, held: { copies: 4, files: 80 } }, 'what the copies hold, measured once the queue ran dry');
});

t.test('our errors as their one line, never a byte of a file', async (t) => {
  const { dir, kubelet, place } = setup(t, 3);
  fs.linkSync(path.join(kubelet, '..data', 'k1'), path.join(dir, 'hard'));
  const copier = slicedCopier();
  t.teardown(() => copier.close());
  const err = await copier.copy({ place, kubeletDir: kubelet, owners }).catch((e: Error) => e);
  t.equal((err as Error).name, 'EnvhookError');
  t.equal((err as Error).message, 'volume "keys": file "k1" has 2 hard links; refusing to copy it');
  t.notMatch(JSON.stringify(err) + String(err), CANARY);
  const gone = await copier.copy({ place, kubeletDir: path.join(dir, 'nope'), owners }).catch((e: Error) => e);
  t.match(gone, { name: 'EnvhookError', message: /volume "keys"/ });
});

t.test('deadlines: a job refused on time, queued or under way; the copy as it was; the next job runs', async (t) => {
  const { kubelet, place, copy } = setup(t, 1000);
  const copier = slicedCopier();
  t.teardown(() => copier.close());
  // Queued behind a long job (another start's: a start never goes ahead of one) past its deadline: refused without being started.
  const first = copier.copy({ place, kubeletDir: kubelet, owners, deadline: process.hrtime.bigint() + 600_000_000_000n });
  const queued = copier.copy({ place, kubeletDir: kubelet, owners, deadline: process.hrtime.bigint() + 1_000_000n });
  await t.rejects(queued, { message: LATE });
  await first;
  // A deadline a few ms ahead: the job gives up at the first entry past it.
  const before = fs.readlinkSync(path.join(copy, '..data'));
  const started = process.hrtime.bigint();
  await t.rejects(copier.copy({ place, kubeletDir: kubelet, owners, deadline: started + 5_000_000n }), { message: LATE });
  t.ok(Number(process.hrtime.bigint() - started) / 1e6 < 5000, 'answered well before the job would have ended');
  t.equal(fs.readlinkSync(path.join(copy, '..data')), before, 'the copy is as it was');
  const payloads = fs.readdirSync(copy).filter((n) => n.startsWith('..') && n !== '..data');
  t.same(payloads, [before], 'what the late job wrote is removed');
  const again = await copier.copy({ place, kubeletDir: kubelet, owners });
  t.equal(again.files, 1000, 'the next job runs');
});

t.test('close(): the job under way stops at its next slice, what it wrote removed; jobs waiting refused', async (t) => {
  const { kubelet, place, copy } = setup(t, 2000);
  const copier = slicedCopier();
  const running = copier.copy({ place, kubeletDir: kubelet, owners }).catch((e: Error) => e);
  const waiting = copier.removePod(place.runDir, place.podUid).catch((e: Error) => e);
  await new Promise((resolve) => setTimeout(resolve, 30)); // some slices in
  await copier.close();
  t.match(await running, { message: 'owned copies: the copier is closing' });
  t.match(await waiting, { message: 'owned copies: the copier is closing' });
  t.notOk(fs.existsSync(copy), 'the copy it was making is gone whole');
  await t.rejects(copier.copy({ place, kubeletDir: kubelet, owners }), { message: 'owned copies: the copier is closed' });
});

t.test('a replaced payload removed later by a job of the copier', async (t) => {
  const { kubelet, place, copy } = setup(t, 5);
  const copier = slicedCopier();
  t.teardown(() => copier.close());
  const first = await copier.copy({ place, kubeletDir: kubelet, owners });
  atomicWrite(kubelet, payload(6));
  const second = await copier.copy({ place, kubeletDir: kubelet, owners });
  t.ok(fs.existsSync(path.join(copy, first.timestamped)), 'the replaced payload is readable for a while');
  await waitFor(() => !fs.existsSync(path.join(copy, first.timestamped)), 10_000, 'the replaced payload removed once retired');
  t.equal(fs.readlinkSync(path.join(copy, '..data')), second.timestamped);
});

t.test('the inline copier: the same jobs in one go', async (t) => {
  const { kubelet, place, copy } = setup(t, 3);
  const copier = inlineCopier();
  t.match(await copier.copy({ place, kubeletDir: kubelet, owners }), { files: 3, created: true });
  await copier.removeCopy(place);
  t.notOk(fs.existsSync(copy));
  await t.rejects(copier.copy({ place, kubeletDir: kubelet, owners, deadline: 0n }), { message: LATE });
});

t.test("a start over the copier's budget: its exact line, in slices too, and nothing of the start written", async (t) => {
  const dir = t.testdir({});
  const runDir = path.join(dir, 'run');
  const copier = slicedCopier({ podBytes: 1 << 30, podFiles: 3, podVolumes: 32, nodeBytes: 1 << 30 });
  t.teardown(() => copier.close());
  // Two volumes of two files: the second passes the pod's 3 files, after the first was measured.
  const start = startOf(t, dir, runDir, 'pod-1', { a: { k1: CANARY, k2: CANARY }, b: { k1: CANARY, k2: CANARY } });
  const err = await copier.copyStart(start).catch((e: Error) => e);
  t.equal(
    (err as Error).message,
    'volume "b" of pod pod-1: the pod\'s owned copies would hold 4 files, over the pod\'s budget of 3 files (podCopyFiles): ' +
      'give the pod fewer files in its volumes with owners, or raise podCopyFiles in the settings file (ENVHOOK_POD_COPY_FILES)',
  );
  t.notMatch(String(err), CANARY);
  t.notOk(fs.existsSync(path.join(runDir, 'volumes', 'pod-1')), 'no copy made');
  const ok = await copier.copyStart(startOf(t, dir, runDir, 'pod-2', { a: { k1: CANARY, k2: CANARY } }));
  t.same(
    ok.map((r) => [r.files, r.created]),
    [[2, true]],
    'a start within the budget is made',
  );
  t.equal((fs.statSync(path.join(runDir, 'volumes', 'pod-2', 'a', 'k1')).mode & 0o777).toString(8), '644', "the kubelet's mode");
});
