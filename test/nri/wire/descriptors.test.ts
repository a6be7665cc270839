import t from 'tap';
import { EnvhookError } from '../../../src/errors.ts';
import {
  decode,
  encode,
  Msg,
  type ConfigureRequestShape,
  type CreateContainerRequestShape,
  type PodSandboxRequestShape,
  type RegisterPluginRequestShape,
  type RequestShape,
  type ResponseShape,
  type StateChangeEventShape,
  type SynchronizeRequestShape,
} from '../../../src/nri/wire/descriptors.ts';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
// Only the fields of the shapes: the decoded messages also carry $typeName.
const plain = (v: unknown): unknown =>
  JSON.parse(JSON.stringify(v, (k, x) => (k === '$typeName' ? undefined : typeof x === 'bigint' ? `${x}n` : x)));

const pod = { id: 'p1', name: 'web', uid: 'u-1', namespace: 'ns', annotations: { 'envhook.io/env': '[]', b: '2' }, runtimeHandler: 'runc' };
const container = {
  id: 'c1',
  podSandboxId: 'p1',
  name: 'app',
  state: 4,
  annotations: { x: 'y' },
  env: ['A=1', 'B='],
  mounts: [{ destination: '/data', type: 'bind', source: '/var/lib/kubelet/pods/u-1/volumes/x', options: ['rbind', 'ro'] }],
  // NRI's Container.pid (field 12, uint32): the missed-container check reads it
  pid: 4242,
};

t.test('RegisterPluginRequest: fields 1-3 as strings on the wire, and back', async (t) => {
  const bytes = encode(Msg.RegisterPluginRequest, { pluginName: 'envhook', pluginIdx: '10', NRIVersion: 'v0.12.0' });
  // tag 0x0a = field 1 length-delimited, 0x12 = field 2, 0x1a = field 3.
  t.equal(hex(bytes), '0a07' + hex(Buffer.from('envhook')) + '1202' + hex(Buffer.from('10')) + '1a07' + hex(Buffer.from('v0.12.0')));
  const back = decode<RegisterPluginRequestShape>(Msg.RegisterPluginRequest, bytes);
  t.same(plain(back), { pluginName: 'envhook', pluginIdx: '10', NRIVersion: 'v0.12.0' });
});

t.test('ConfigureRequest: int64 timeouts come back as bigint; a runtime before NRI 0.12 leaves NRIVersion empty', async (t) => {
  const init = {
    config: '',
    runtimeName: 'containerd',
    runtimeVersion: '2.1.9',
    registrationTimeout: 5_000_000_000n,
    requestTimeout: 2_000_000_000n,
  };
  const back = decode<ConfigureRequestShape>(Msg.ConfigureRequest, encode(Msg.ConfigureRequest, init));
  t.equal(back.registrationTimeout, 5_000_000_000n);
  t.equal(back.requestTimeout, 2_000_000_000n);
  t.equal(back.runtimeName, 'containerd');
  t.equal(back.runtimeVersion, '2.1.9');
  t.equal(back.NRIVersion, '');
});

t.test('ConfigureResponse: the event mask is field 2 (varint)', async (t) => {
  const bytes = encode(Msg.ConfigureResponse, { events: 0x18 });
  t.equal(hex(bytes), '1018');
  t.equal(decode<{ events: number }>(Msg.ConfigureResponse, bytes).events, 0x18);
});

t.test('CreateContainerRequest: pod and container with maps, repeated env and mounts round trip', async (t) => {
  const back = decode<CreateContainerRequestShape>(Msg.CreateContainerRequest, encode(Msg.CreateContainerRequest, { pod, container }));
  t.same(plain(back), { pod, container });
});

t.test('CreateContainerRequest: an empty message decodes with pod and container absent', async (t) => {
  const back = decode<CreateContainerRequestShape>(Msg.CreateContainerRequest, new Uint8Array());
  t.equal(back.pod, undefined);
  t.equal(back.container, undefined);
});

t.test('SynchronizeRequest and SynchronizeResponse: lists and the more flag', async (t) => {
  const init = { pods: [pod, { ...pod, id: 'p2', annotations: {} }], containers: [container], more: true };
  const back = decode<SynchronizeRequestShape>(Msg.SynchronizeRequest, encode(Msg.SynchronizeRequest, init));
  t.same(plain(back), init);
  t.equal(hex(encode(Msg.SynchronizeResponse, { more: true })), '1001');
  t.equal(decode<{ more: boolean }>(Msg.SynchronizeResponse, new Uint8Array([0x10, 0x01])).more, true);
});

t.test('StateChangeEvent: the event enum and its pod', async (t) => {
  const back = decode<StateChangeEventShape>(Msg.StateChangeEvent, encode(Msg.StateChangeEvent, { event: 3, pod }));
  t.equal(back.event, 3);
  t.same(plain(back.pod), pod);
  t.equal(back.container, undefined);
});

t.test('StopPodSandbox and RemovePodSandbox requests carry the pod; their responses are empty', async (t) => {
  for (const desc of [Msg.StopPodSandboxRequest, Msg.RemovePodSandboxRequest]) {
    t.same(plain(decode<PodSandboxRequestShape>(desc, encode(desc, { pod })).pod), pod, desc.name);
  }
  for (const desc of [Msg.StopPodSandboxResponse, Msg.RemovePodSandboxResponse, Msg.Empty, Msg.StopContainerResponse]) {
    t.equal(encode(desc, {}).length, 0, desc.name);
  }
});

t.test('CreateContainerResponse: the adjustment env list, annotations and mounts', async (t) => {
  const adjust = {
    env: [
      { key: '-OLD', value: '' },
      { key: 'NEW', value: 'v' },
    ],
    annotations: { 'envhook.io/applied': '1' },
    mounts: [{ destination: '/keys', type: 'bind', source: '/run/envhook/volumes/p/keys', options: ['rbind', 'ro'] }],
  };
  const back = decode<{ adjust: typeof adjust }>(Msg.CreateContainerResponse, encode(Msg.CreateContainerResponse, { adjust }));
  t.same(plain(back.adjust), adjust);
});

t.test('ttRPC Request and Response: bytes payload, int64 timeout, metadata, status', async (t) => {
  const payload = encode(Msg.CreateContainerRequest, { pod });
  const req = {
    service: 'nri.pkg.api.v1alpha1.Plugin',
    method: 'CreateContainer',
    payload,
    timeoutNano: 2_000_000_000n,
    metadata: [{ key: 'k', value: 'v' }],
  };
  const r = decode<RequestShape>(Msg.Request, encode(Msg.Request, req));
  t.equal(r.service, req.service);
  t.equal(r.method, req.method);
  t.equal(r.timeoutNano, req.timeoutNano);
  t.same(plain(r.metadata), req.metadata);
  t.same(plain(decode<CreateContainerRequestShape>(Msg.CreateContainerRequest, r.payload).pod), pod);

  const res = decode<ResponseShape>(
    Msg.Response,
    encode(Msg.Response, { status: { code: 5, message: 'not found' }, payload: new Uint8Array([1, 2]) }),
  );
  t.same(plain(res.status), { code: 5, message: 'not found' });
  t.same([...res.payload], [1, 2]);
});

t.test('CRI StopContainerRequest: container_id field 1, timeout field 2', async (t) => {
  const bytes = encode(Msg.StopContainerRequest, { containerId: 'abc', timeout: 0n });
  t.equal(hex(bytes), '0a03' + hex(Buffer.from('abc')));
  const back = decode<{ containerId: string; timeout: bigint }>(
    Msg.StopContainerRequest,
    encode(Msg.StopContainerRequest, { containerId: 'abc', timeout: 30n }),
  );
  t.equal(back.containerId, 'abc');
  t.equal(back.timeout, 30n);
});

t.test('a malformed message is an EnvhookError naming the message and its length, never its bytes', async (t) => {
  // Field 1 length-delimited, claims 100 bytes, has 6: a canary in them.
  const bytes = new Uint8Array([0x0a, 100, ...Buffer.from('CANARY')]);
  const err = t.throws(() => decode(Msg.RegisterPluginRequest, bytes)) as Error;
  t.ok(err instanceof EnvhookError);
  t.equal(err.message, 'malformed RegisterPluginRequest message (8 bytes)');
  t.notMatch(String((err as Error & { cause?: Error }).cause?.message), /CANARY/);
});
