// run<T>(): facts → plan → apply → chown for any applier, on a kubelet-like pod with an owned
// volume: what the applier gets and returns, that it runs before the chown, and afterChown.
import t, { type Test } from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { run, runAsync } from '../src/pipeline.ts';
import { slicedCopier } from '../src/mirror/copier.ts';
import { factsFromSpec } from '../src/facts/spec-facts.ts';
import { silentLogger } from '../src/log.ts';
import { makePod, rawAnnotations } from '../scripts/kubelet-pod.ts';

function setup(t: Test) {
  const kubeletRoot = path.join(t.testdir({}), 'kubelet');
  const pod = makePod(kubeletRoot, { atomic: [{ plugin: 'secret', name: 'keys', payload: { 'key.pem': { data: 'k', mode: 0o400 } } }] });
  const annotations = {
    ...pod.annotations('app'),
    ...rawAnnotations({
      'envhook.io/env': { app: [{ name: 'A', value: '1' }] },
      'envhook.io/volumeOwners': [{ volume: 'keys', defaultUser: 1000 }],
    }),
  };
  const facts = factsFromSpec({ process: { env: ['PATH=/bin'] }, mounts: pod.mounts('app'), annotations });
  const keyFile = fs.realpathSync(path.join(pod.dir, 'volumes/kubernetes.io~secret/keys/key.pem'));
  fs.chownSync(keyFile, 0, 0);
  return { facts, keyFile, options: { settings: { kubeletRoot }, stage: 'create' as const, log: silentLogger } };
}

t.test('the applier gets the changes, its output comes back with the plan; afterChown sees the owners', async (t) => {
  const { facts, keyFile, options } = setup(t);
  const seen: string[] = [];
  const { output, plan } = run(facts, { ...options, afterChown: (owners) => void seen.push(...owners.map((o) => o.volume)) }, (changes) => [
    ...(changes.env?.values ?? []),
  ]);
  t.same(output, [['A', '1']], 'the applier output');
  t.same(plan.env, [{ name: 'A', source: 'value' }], 'the plan: names and sources');
  t.equal(fs.statSync(keyFile).uid, 1000, 'the chown ran');
  t.same(seen, ['keys'], 'afterChown got the prepared volume');
});

t.test('an applier that refuses: no file changes owner', async (t) => {
  const { facts, keyFile, options } = setup(t);
  let after = false;
  t.throws(
    () =>
      run(facts, { ...options, afterChown: () => void (after = true) }, () => {
        throw new Error('refused');
      }),
    { message: 'refused' },
  );
  t.equal(fs.statSync(keyFile).uid, 0, 'no chown');
  t.notOk(after, 'no afterChown');
});

t.test('a dry run: no chown, no afterChown, the files that would change listed', async (t) => {
  const { facts, keyFile, options } = setup(t);
  let after = false;
  const { plan } = run(facts, { ...options, dryRun: true, afterChown: () => void (after = true) }, () => undefined);
  t.equal(fs.statSync(keyFile).uid, 0, 'no chown');
  t.notOk(after, 'no afterChown');
  t.same(
    plan.owners.map((o) => [o.volume, o.path, o.uid]),
    [['keys', 'key.pem', 1000]],
    'the plan lists the file',
  );
});

/** A pod of three owned volumes its container mounts, the third holding a FIFO (refused by the copy) where `fifo`. */
function threeVolumes(t: Test, fifo = true) {
  const dir = t.testdir({});
  const kubeletRoot = path.join(dir, 'kubelet');
  const payload = { key: { data: 'CANARY-pipeline-9a1e', mode: 0o400 } };
  const names = ['one', 'two', 'bad'];
  const pod = makePod(kubeletRoot, { atomic: names.map((name) => ({ plugin: 'secret' as const, name, payload })) });
  const vol = (name: string) => path.join(pod.dir, 'volumes/kubernetes.io~secret', name);
  if (fifo) execFileSync('mkfifo', [path.join(fs.realpathSync(path.join(vol('bad'), '..data')), 'fifo')]);
  const annotations = {
    ...pod.annotations('app'),
    ...rawAnnotations({ 'envhook.io/volumeOwners': names.map((volume) => ({ volume, defaultUser: 1000 })) }),
  };
  const mounts = [
    ...pod.mounts('app'),
    ...names.map((n) => ({ destination: `/${n}`, source: vol(n), type: 'bind', options: ['rbind', 'ro'] })),
  ];
  const facts = factsFromSpec({ process: { env: ['PATH=/bin'] }, mounts, annotations });
  const runDir = path.join(dir, 'run');
  const options = { settings: { kubeletRoot }, stage: 'nri' as const, log: silentLogger, copies: { runDir, keepsIdMappings: false } };
  return { facts, options, runDir, podCopies: path.join(runDir, 'volumes', pod.uid) };
}

t.test('all or nothing: a start refused at its third copy leaves none of its copies (in one go, and by the sliced copier)', async (t) => {
  const refusal = { message: 'volume "bad": "fifo" is a FIFO: refusing to copy it' };
  const a = threeVolumes(t);
  t.throws(() => run(a.facts, a.options, () => undefined), refusal);
  t.same(fs.existsSync(a.podCopies) ? fs.readdirSync(a.podCopies) : [], [], 'nothing left in the run directory');

  const b = threeVolumes(t);
  const copier = slicedCopier();
  t.teardown(() => copier.close());
  await t.rejects(
    runAsync(b.facts, b.options, copier, () => undefined),
    refusal,
  );
  // The removals are queued before any later job: one more job waits for them.
  await copier.removePod(path.join(b.runDir, 'elsewhere'), 'x').catch(() => false);
  t.same(fs.existsSync(b.podCopies) ? fs.readdirSync(b.podCopies) : [], [], 'nothing left in the run directory');
});

t.test('runAsync: the copies made by the copier, the applier run after them with their mounts', async (t) => {
  const s = threeVolumes(t, false);
  const copier = slicedCopier();
  t.teardown(() => copier.close());
  const { output, plan } = await runAsync(s.facts, s.options, copier, (changes) => changes.owners.flatMap((o) => o.copy?.mounts ?? []));
  t.same(
    output.map((m) => [m.destination, m.source]),
    ['one', 'two', 'bad'].map((n) => [`/${n}`, path.join(s.podCopies, n)]),
  );
  t.equal(plan.owners.length, 3, 'one owned file a volume');
  t.equal(fs.statSync(path.join(s.podCopies, 'one', 'key')).uid, 1000);
});

t.test("a start refused after its copies removes them, unless another container's start of the pod has written them since", async (t) => {
  const copier = slicedCopier();
  t.teardown(() => copier.close());
  const after = { message: 'refused after the copies' };
  // The applier's second run (after the copies) fails the start: what a late refusal looks like.
  const failing = (between: () => Promise<void> | void) => {
    let calls = 0;
    let waited: Promise<void> | void;
    return () => {
      if (++calls === 2) {
        waited = between();
        throw new Error(after.message);
      }
      return waited;
    };
  };
  const a = threeVolumes(t, false);
  await t.rejects(
    runAsync(
      a.facts,
      a.options,
      copier,
      failing(() => {}),
    ),
    after,
  );
  await copier.removePod(path.join(a.runDir, 'elsewhere'), 'x').catch(() => false); // after the removals
  t.same(fs.existsSync(a.podCopies) ? fs.readdirSync(a.podCopies) : [], [], "alone, the refused start's copies are removed");

  const b = threeVolumes(t, false);
  // Another container of the pod starts meanwhile and writes the copy of "one" again (its own payload).
  let theirs: Promise<string> | undefined;
  const other = () => {
    theirs = runAsync(b.facts, b.options, copier, () => undefined).then(() => fs.readlinkSync(path.join(b.podCopies, 'one', '..data')));
  };
  await t.rejects(runAsync(b.facts, b.options, copier, failing(other)), after);
  const payload = await theirs!;
  await copier.removePod(path.join(b.runDir, 'elsewhere'), 'x').catch(() => false);
  t.same(fs.readdirSync(b.podCopies).sort(), ['bad', 'one', 'two'], "the other container's copies stay");
  t.equal(fs.readlinkSync(path.join(b.podCopies, 'one', '..data')), payload, 'with the payload it wrote');
  t.equal(fs.statSync(path.join(b.podCopies, 'one', 'key')).uid, 1000);
});
