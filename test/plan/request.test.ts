// What the annotations ask of one container: its env entries, the pod's owners, and which
// volumes need the pod directory (none that an admin override maps).
import t from 'tap';
import { envRequest, ownersRequest, podVolumes } from '../../src/plan/request.ts';

const fileKeyRef = (volumeName: string) => ({ name: 'A', valueFrom: { fileKeyRef: { volumeName, path: 'a.env', key: 'A' } } });
const annotations = {
  'envhook.io/env': JSON.stringify({ app: [fileKeyRef('env-vol'), { name: 'B', value: 'b' }], other: [fileKeyRef('x')] }),
  'envhook.io/envFrom': JSON.stringify({ app: [{ prefix: 'P_', fileRef: { volumeName: 'from-vol', path: 'b.env' } }] }),
  'envhook.io/serviceLinks': JSON.stringify({ '*': false }),
  'envhook.io/volumeOwners': JSON.stringify([{ volume: 'keys', defaultUser: 1000 }]),
};

t.test('entries for this container; serviceLinks through "*"', async (t) => {
  const req = envRequest({ annotations, container: 'app' })!;
  t.same(
    req.env.map((v) => v.name),
    ['A', 'B'],
  );
  t.same(
    req.envFrom.map((s) => s.fileRef?.volumeName),
    ['from-vol'],
  );
  t.equal(req.removeServiceLinks, true);
  t.same(
    envRequest({ annotations: { 'envhook.io/serviceLinks': '{"*":true}' }, container: 'app' }),
    { env: [], envFrom: [], removeServiceLinks: false },
    'serviceLinks: true is a request',
  );
  t.equal(envRequest({ annotations: { 'envhook.io/env': '{"other":[]}' }, container: 'app' }), undefined, 'nothing for this container');
  t.equal(envRequest({ annotations: {}, container: 'app' }), undefined);
});

t.test("owners are the pod's; volumes that need the pod directory", async (t) => {
  t.same(
    ownersRequest({ annotations }).map((o) => o.volume),
    ['keys'],
  );
  t.same(ownersRequest({ annotations: {} }), []);
  const req = envRequest({ annotations, container: 'app' });
  const owners = ownersRequest({ annotations });
  t.same(podVolumes(req, owners, new Map()), ['from-vol', 'env-vol', 'keys']);
  t.same(
    podVolumes(
      req,
      owners,
      new Map([
        ['from-vol', '/d'],
        ['keys', '/k'],
      ]),
    ),
    ['env-vol'],
    'overridden volumes need no pod',
  );
  t.same(
    podVolumes({ env: [{ name: 'B', value: 'b' }], envFrom: [], removeServiceLinks: true }, [], new Map()),
    [],
    'values only: no pod directory',
  );
  t.same(
    podVolumes(
      { env: [{ name: 'W', valueFrom: { fileRef: { volumeName: 'vault', path: 'pw' } } }], envFrom: [], removeServiceLinks: false },
      [],
      new Map(),
    ),
    ['vault'],
    'a fileRef volume',
  );
  t.same(podVolumes(undefined, [], new Map()), []);
});
