// run<T>(): facts → plan → apply → chown for any applier, on a kubelet-like pod with an owned
// volume: what the applier gets and returns, that it runs before the chown, and afterChown.
import t, { type Test } from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { run } from '../src/pipeline.ts';
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
