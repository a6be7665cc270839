// The plan on a kubelet-like pod: what it finds and resolves, that it writes nothing, that the
// pod directory is looked up only when a volume is needed, and the hook stage's check.
import t, { type Test } from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { planChanges, type PlanOptions } from '../../src/plan/plan-changes.ts';
import { factsFromSpec } from '../../src/facts/spec-facts.ts';
import { releaseOwners } from '../../src/ownership/prepare.ts';
import { silentLogger } from '../../src/log.ts';
import { EnvhookError } from '../../src/errors.ts';
import type { Spec } from '../../src/oci/spec.ts';
import { makePod, rawAnnotations } from '../../scripts/kubelet-pod.ts';

const opts = (kubeletRoot: string, env: PlanOptions['env'] = 'resolve'): PlanOptions => ({
  kubeletRoot,
  env,
  log: silentLogger,
  stage: 'inject',
});

function podSpec(t: Test, annotations: Record<string, unknown>) {
  const pod = makePod(path.join(t.testdir({}), 'kubelet'), {
    emptyDirs: { config: { 'a.env': "A='from-file'\n" } },
    atomic: [{ plugin: 'secret', name: 'keys', payload: { k: 'K' } }],
  });
  const spec: Spec = {
    process: { env: ['PATH=/bin', 'X_SERVICE_HOST=1'] },
    mounts: pod.mounts('app'),
    annotations: { ...pod.annotations('app'), ...rawAnnotations(annotations) },
  };
  return { pod, spec };
}

t.test('env resolved with values, owners checked and open, the mark; nothing written', async (t) => {
  const { pod, spec } = podSpec(t, {
    'envhook.io/env': {
      app: [
        { name: 'A', valueFrom: { fileKeyRef: { volumeName: 'config', path: 'a.env', key: 'A' } } },
        { name: 'B', value: '$(A)!' },
      ],
    },
    'envhook.io/serviceLinks': { app: false },
    'envhook.io/volumeOwners': [{ volume: 'keys', defaultUser: 1000 }],
  });
  const c = planChanges(factsFromSpec(spec), opts(pod.kubeletRoot));
  t.teardown(() => releaseOwners(c.owners));
  t.same(c.env!.env, ['PATH=/bin', 'A=from-file', 'B=from-file!']);
  t.same(
    [...c.env!.values],
    [
      ['A', 'from-file'],
      ['B', 'from-file!'],
    ],
  );
  t.same(c.env!.removed, ['X_SERVICE_HOST']);
  t.match(c.mark, /^sha256:/);
  t.same(
    c.owners.map((o) => [o.volume, o.defaultOwner]),
    [['keys', { uid: 1000, hostUid: 1000 }]],
  );
  const data = path.join(pod.dir, 'volumes/kubernetes.io~secret/keys/..data/k');
  t.equal(fs.statSync(data).uid, 0, 'the plan chowns nothing');
});

t.test('the pod directory is looked up only when a volume is needed', async (t) => {
  const nowhere = '/nonexistent/kubelet';
  const values: Spec = {
    process: { env: [] },
    annotations: { 'io.kubernetes.cri.container-name': 'app', 'envhook.io/env': '{"app":[{"name":"A","value":"1"}]}' },
    mounts: [
      { destination: '/etc/hosts', source: `${nowhere}/pods/u1/etc-hosts` },
      { destination: '/x', source: `${nowhere}/pods/u2/etc-hosts` },
    ],
  };
  t.same(planChanges(factsFromSpec(values), opts(nowhere)).env!.env, ['A=1'], 'values only: two pods in the mounts are never looked at');
  const files = {
    ...values,
    annotations: {
      ...(values.annotations as object),
      'envhook.io/envFrom': '{"app":[{"fileRef":{"volumeName":"config","path":"a.env"}}]}',
    },
  } as Spec;
  t.throws(
    () => planChanges(factsFromSpec(files), opts(nowhere)),
    new EnvhookError(`config.json mounts name more than one pod under ${nowhere}/pods`),
  );
  t.same(
    planChanges(factsFromSpec(files, { volumes: new Map([['config', t.testdir({ 'a.env': "Z='1'\n" })]]) }), opts(nowhere)).env!.set.map(
      (s) => s.name,
    ),
    ['Z', 'A'],
    'an override needs no pod',
  );
});

t.test('the hook stage checks the mark and resolves nothing; sandboxes pass', async (t) => {
  const { pod, spec } = podSpec(t, {
    'envhook.io/env': { app: [{ name: 'A', valueFrom: { fileKeyRef: { volumeName: 'nope', path: 'a.env', key: 'A' } } }] },
  });
  t.throws(() => planChanges(factsFromSpec(spec), opts(pod.kubeletRoot, 'verify')), {
    message: /^env requested by annotation "envhook\.io\/env" was not applied/,
  });
  t.throws(() => planChanges(factsFromSpec(spec), opts(pod.kubeletRoot)), new EnvhookError('volume "nope" not found'));
  const sandbox = { ...spec, annotations: { ...(spec.annotations as object), 'io.kubernetes.cri.container-type': 'sandbox' } } as Spec;
  t.same(planChanges(factsFromSpec(sandbox), opts('/nonexistent')), {
    container: 'app',
    sandbox: true,
    env: undefined,
    owners: [],
    mark: undefined,
  });
});
