// Which containers of a Synchronize ran without envhook: pods asking env for them, not stopped,
// not sandboxes, not under the guard handler, without the applied mark for these annotations.
import t from 'tap';
import { findMissed } from '../../../src/nri/worker/missed.ts';
import { appliedDigest } from '../../../src/plan/mark.ts';
import type { NriPod } from '../../../src/facts/nri-facts.ts';
import type { NriSyncContainer } from '../../../src/nri/wire/plain-data.ts';
import { APPLIED_KEY, EVICT_KEY } from '../../../src/k8s/annotation-keys.ts';

const ENV = JSON.stringify({ app: [{ name: 'A', value: 'canary-missed' }] });
const pod = (id: string, annotations: Record<string, string>, runtimeHandler?: string): NriPod => ({
  id,
  name: `pod-${id}`,
  namespace: 'ns',
  uid: `uid-${id}`,
  annotations,
  runtimeHandler,
});
const ctr = (id: string, podSandboxId: string, name: string, o: Partial<NriSyncContainer> = {}): NriSyncContainer => ({
  id,
  name,
  podSandboxId,
  annotations: {},
  state: 2,
  mounts: [],
  ...o,
});

t.test('missed: asked for, running, no mark', async (t) => {
  const pods = [
    pod('s1', { 'envhook.io/env': ENV }),
    pod('s2', {}),
    pod('s3', { 'envhook.io/env': ENV }, 'envhook'),
    pod('s4', { 'envhook.io/env': ENV, [EVICT_KEY]: 'true' }),
  ];
  const mark = appliedDigest({ annotations: pods[0]!.annotations, container: 'app' });
  const containers = [
    ctr('missed', 's1', 'app'),
    ctr('applied', 's1', 'app', { annotations: { [APPLIED_KEY]: mark } }),
    ctr('other-mark', 's1', 'app', { annotations: { [APPLIED_KEY]: 'sha256:0000' } }),
    ctr('not-asked', 's1', 'sidecar'),
    ctr('stopped', 's1', 'app', { state: 4 }),
    ctr('sandbox', 's1', 'app', { annotations: { 'io.kubernetes.cri.container-type': 'sandbox' } }),
    ctr('plain', 's2', 'app'),
    ctr('guarded', 's3', 'app'),
    ctr('evicts', 's4', 'app'),
    ctr('orphan', 'gone', 'app'),
  ];
  const missed = findMissed(pods, containers);
  t.same(
    missed.map((m) => [m.id, m.podEvicts]),
    [
      ['missed', false],
      ['other-mark', false],
      ['evicts', true],
    ],
  );
  t.same(missed[0], { id: 'missed', name: 'app', pod: 'pod-s1', namespace: 'ns', podUid: 'uid-s1', podEvicts: false });
  t.notMatch(JSON.stringify(missed), 'canary-missed', 'names only');
});

t.test('an annotation that cannot be read: missed, with why (the create would have been refused)', async (t) => {
  const missed = findMissed([pod('s1', { 'envhook.io/env': '{"app": [' })], [ctr('c', 's1', 'app')]);
  t.same(missed, [
    {
      id: 'c',
      name: 'app',
      pod: 'pod-s1',
      namespace: 'ns',
      podUid: 'uid-s1',
      podEvicts: false,
      invalid: 'annotation "envhook.io/env" is not valid JSON (truncated)',
    },
  ]);
});
