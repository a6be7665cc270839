import t from 'tap';
import { decode, encode, Msg } from '../../../src/nri/wire/descriptors.ts';
import { toCreateRequest, toPod, toSyncContainer } from '../../../src/nri/wire/plain-data.ts';
import type { SynchronizeRequestShape } from '../../../src/nri/wire/descriptors.ts';

t.test('a request without pod or container: empty fields, never undefined', async (t) => {
  t.same(toCreateRequest({}), {
    pod: { id: '', name: '', namespace: '', uid: '', annotations: {} },
    container: { id: '', name: '', annotations: {}, env: [], mounts: [], uidMappings: undefined },
  });
});

t.test('annotations are copies: the handler cannot reach into the decoded message', async (t) => {
  const msg = decode<Parameters<typeof toCreateRequest>[0]>(
    Msg.CreateContainerRequest,
    encode(Msg.CreateContainerRequest, { pod: { annotations: { a: '1' } } }),
  );
  const req = toCreateRequest(msg);
  req.pod.annotations.b = '2';
  t.same(msg.pod!.annotations, { a: '1' });
});

t.test("Synchronize's pods and containers: the watcher's and the missed check's fields only, never a container's env", async (t) => {
  const wire = encode(Msg.SynchronizeRequest, {
    pods: [{ id: 's1', name: 'web', namespace: 'ns', uid: 'u1', annotations: { a: '1' }, runtimeHandler: 'envhook' }, {}],
    containers: [
      {
        id: 'c1',
        podSandboxId: 's1',
        name: 'app',
        state: 3,
        annotations: { 'envhook.io/applied': 'sha256:x' },
        env: ['SECRET=canary-sync'],
        mounts: [{ destination: '/k', source: '/v', type: 'bind', options: ['ro'] }],
      },
    ],
    more: false,
  });
  const msg = decode<SynchronizeRequestShape>(Msg.SynchronizeRequest, wire);
  t.same(
    msg.pods.map(toPod),
    [
      { id: 's1', name: 'web', namespace: 'ns', uid: 'u1', annotations: { a: '1' }, runtimeHandler: 'envhook' },
      { id: '', name: '', namespace: '', uid: '', annotations: {} },
    ],
    'the runtime handler only when the runtime names one',
  );
  const c = msg.containers.map(toSyncContainer);
  t.same(c, [
    {
      id: 'c1',
      name: 'app',
      podSandboxId: 's1',
      annotations: { 'envhook.io/applied': 'sha256:x' },
      state: 3,
      mounts: [{ destination: '/k', source: '/v', type: 'bind', options: ['ro'] }],
    },
  ]);
  t.notMatch(JSON.stringify(c), 'canary-sync');
});

t.test('a container in a user namespace: every mount taken as idmapped (the kubelet maps them; NRI cannot say so)', async (t) => {
  const mount = {
    destination: '/keys',
    source: '/var/lib/kubelet/pods/u/volumes/kubernetes.io~secret/keys',
    type: 'bind',
    options: ['ro'],
  };
  const container = (namespaces: { type: string; path: string }[]) => ({
    id: 'c1',
    podSandboxId: 's1',
    name: 'app',
    mounts: [mount],
    linux: { namespaces },
  });
  const wire = (namespaces: { type: string; path: string }[]) =>
    decode<Parameters<typeof toCreateRequest>[0]>(
      Msg.CreateContainerRequest,
      encode(Msg.CreateContainerRequest, { pod: { id: 's1' }, container: container(namespaces) }),
    );
  const userns = [
    { type: 'pid', path: '' },
    { type: 'user', path: '/proc/4242/ns/user' },
  ];
  t.same(toCreateRequest(wire(userns)).container.mounts, [{ ...mount, idmapped: true }], 'CreateContainer');
  t.same(toCreateRequest(wire([{ type: 'network', path: '/var/run/netns/x' }])).container.mounts, [mount], 'no user namespace: as sent');
  const sync = decode<SynchronizeRequestShape>(
    Msg.SynchronizeRequest,
    encode(Msg.SynchronizeRequest, { pods: [], containers: [container(userns)], more: false }),
  );
  t.same(sync.containers.map(toSyncContainer)[0]?.mounts, [{ ...mount, idmapped: true }], "Synchronize's containers too");
});
