// The copier: owned-copy jobs in a worker thread, so the caller's event loop stays free; a job's
// deadline refused on time, a stuck thread replaced, errors crossing as our one line only.
import t, { type Test } from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { atomicWrite } from '../../scripts/kubelet-pod.ts';
import { inlineCopier, threadCopier } from '../../src/mirror/copier.ts';
import { copyDir } from '../../src/mirror/layout.ts';

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

t.test('a copy and a removal in the thread, while this loop keeps turning', async (t) => {
  const { kubelet, place, copy } = setup(t, 400);
  const copier = threadCopier({ startNow: true });
  t.teardown(() => copier.close());
  let turns = 0;
  const ticker = setInterval(() => turns++, 1);
  const r = await copier.copy({ place, kubeletDir: kubelet, owners });
  clearInterval(ticker);
  const bytes = Array.from({ length: 400 }, (_, i) => `${CANARY}-${i}`.length).reduce((a, b) => a + b);
  t.same(copier.stats().held, { bytes, files: 400, copies: 1 }, 'what the copies hold, measured in the thread after the job');
  t.match(r, { dir: copy, files: 400, created: true });
  t.equal(r.owned.length, 400);
  t.equal(fs.statSync(path.join(copy, 'k7')).uid, 1000, 'owned in the copy');
  t.equal(fs.readFileSync(path.join(copy, 'k7'), 'utf8'), `${CANARY}-7`);
  t.ok(turns > 0, `this thread's loop ran during the copy (${turns} timer turns)`);
  t.equal(await copier.removePod(place.runDir, place.podUid), true, 'the pod removed');
  t.notOk(fs.existsSync(path.dirname(copy)));
  t.equal(await copier.removePod(place.runDir, place.podUid), false, 'nothing left to remove');
  t.same(copier.stats(), { queued: 0, restarts: 0, held: { bytes: 0, files: 0, copies: 0 } });
});

t.test('our errors cross as their one line, never a byte of a file; a foreign error as its code', async (t) => {
  const { dir, kubelet, place } = setup(t, 3);
  fs.linkSync(path.join(kubelet, '..data', 'k1'), path.join(dir, 'hard'));
  const copier = threadCopier();
  t.teardown(() => copier.close());
  const err = await copier.copy({ place, kubeletDir: kubelet, owners }).catch((e: Error) => e);
  t.equal((err as Error).name, 'EnvhookError');
  t.equal((err as Error).message, 'volume "keys": file "k1" has 2 hard links; refusing to copy it');
  t.notMatch(JSON.stringify(err) + String(err), CANARY);
  const gone = await copier.copy({ place, kubeletDir: path.join(dir, 'nope'), owners }).catch((e: Error) => e);
  t.match(gone, { name: 'EnvhookError', message: /volume "keys"/ });
});

t.test('deadlines: a job refused on time by its thread, or by the backstop, which replaces a thread that does not answer', async (t) => {
  const { kubelet, place, copy } = setup(t, 400);
  const copier = threadCopier({ graceMs: 0 });
  t.teardown(() => copier.close());
  // Queued behind a long job past its deadline: refused without being started.
  const first = copier.copy({ place, kubeletDir: kubelet, owners });
  const queued = copier.copy({ place, kubeletDir: kubelet, owners, deadline: process.hrtime.bigint() + 1_000_000n });
  await t.rejects(queued, { message: LATE });
  await first;
  // A deadline a few ms ahead: the thread gives up (or, not answering by then, is stopped): the same line either way.
  const started = process.hrtime.bigint();
  const before = fs.readlinkSync(path.join(copy, '..data'));
  await t.rejects(copier.copy({ place, kubeletDir: kubelet, owners, deadline: started + 5_000_000n }), { message: LATE });
  t.ok(Number(process.hrtime.bigint() - started) / 1e6 < 5000, 'answered well before a stuck copy would have');
  t.equal(fs.readlinkSync(path.join(copy, '..data')), before, 'the copy is as it was');
  const again = await copier.copy({ place, kubeletDir: kubelet, owners });
  t.equal(again.files, 400, 'the next job runs (in a new thread if the old one was stopped)');
});

t.test('the inline copier: the same jobs in this thread', async (t) => {
  const { kubelet, place, copy } = setup(t, 3);
  const copier = inlineCopier();
  t.match(await copier.copy({ place, kubeletDir: kubelet, owners }), { files: 3, created: true });
  await copier.removeCopy(place);
  t.notOk(fs.existsSync(copy));
  await t.rejects(copier.copy({ place, kubeletDir: kubelet, owners, deadline: 0n }), { message: LATE });
});

t.test('a thread stopped by the backstop in the middle of a copy: its half-written payload removed before the next job', async (t) => {
  // A copy of 15,000 files takes seconds; the next thread's start and a copy of two files, well under the backstop.
  const { kubelet, place, copy } = setup(t, 15_000);
  const copier = threadCopier({ backstopMs: 500, startNow: true });
  t.teardown(() => copier.close());
  const limits = { maxBytes: 1 << 24, maxEntries: 20_000 };
  const budgets = { podBytes: 1 << 30, podFiles: 1 << 30, podVolumes: 10, nodeBytes: 1 << 30 };
  await t.rejects(copier.copy({ place, kubeletDir: kubelet, owners, limits, budgets }), { message: /did not finish in 0.5 s: stopped$/ });
  t.equal(copier.stats().restarts, 1, 'the thread was stopped');
  // The next job runs after the clean-up of the stopped one's copy (here: a small copy of another volume).
  const other = { ...place, volume: 'other' };
  atomicWrite(path.join(path.dirname(kubelet), 'other'), payload(2));
  // Under load a thread's start may pass the backstop too: the clean-up then runs again first.
  for (let i = 0; ; i++) {
    const ok = await copier.copy({ place: other, kubeletDir: path.join(path.dirname(kubelet), 'other'), owners }).then(
      () => true,
      (err: Error) => (i < 3 && /stopped$/.test(err.message) ? false : Promise.reject(err)),
    );
    if (ok) break;
  }
  const left = fs.existsSync(copy) ? fs.readdirSync(copy).filter((n) => n.startsWith('..')) : [];
  const current = left.includes('..data') ? fs.readlinkSync(path.join(copy, '..data')) : undefined;
  t.same(left, current === undefined ? [] : ['..data', current].sort(), 'no payload but the one ..data points at');
});
