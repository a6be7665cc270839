// envhook's CRI call: its table of facts (src/nri/wire/cri-schema.ts) against cri-api's api.proto
// from Debian sid, the call as a real gRPC server (@grpc/grpc-js) reads it with that proto, the
// runtime's NotFound, and which socket is used when none is set.
import t from 'tap';
import { FILE_SET } from '../../../src/nri/wire/descriptors.ts';
import { CRI_FILE, CRI_METHODS, CRI_PACKAGE, CRI_SERVICE } from '../../../src/nri/wire/cri-schema.ts';
import { criClient, CRI_SOCKETS, defaultCriSocket } from '../../../src/nri/wire/cri-client.ts';
import { GrpcError } from '../../../src/nri/wire/grpc.ts';
import { criMessage, criRegistry, missingForCriProto } from '../../helpers/cri/proto.ts';
import { startCriServer } from '../../helpers/cri/server.ts';

const skip = missingForCriProto();

t.test("the table matches cri-api's runtime.v1 (Debian sid)", { skip }, async (t) => {
  const ours = FILE_SET.file.find((f) => f.package === CRI_PACKAGE)!;
  t.same(ours.messageType.map((m) => m.name).sort(), Object.keys(CRI_FILE.messages).sort(), 'our messages, as descriptors');
  let fields = 0;
  for (const m of ours.messageType) {
    const theirs = criMessage(m.name).proto;
    // Every field we define is theirs, by number: name, type and label. Theirs may have more (protobuf skips them).
    for (const f of m.field) {
      const o = theirs.field.find((x) => x.number === f.number);
      if (!t.ok(o, `${m.name}.${f.name} (${f.number}) exists upstream`)) continue;
      t.same([o!.name, o!.type, o!.label], [f.name, f.type, f.label], `${m.name}.${f.name}: name, type, label`);
      fields++;
    }
    t.equal(theirs.field.length, m.field.length, `${m.name}: every upstream field is in our table`);
  }
  t.equal(
    fields,
    7,
    'StopContainer: container_id, timeout; Version: version; runtime_name, runtime_version, runtime_api_version and version',
  );
  const service = criRegistry().getService(CRI_SERVICE);
  t.ok(service, `${CRI_SERVICE} exists upstream`);
  for (const [name, m] of Object.entries(CRI_METHODS)) {
    const theirs = service!.methods.find((x) => x.name === name);
    t.same(
      [theirs?.input.typeName, theirs?.output.typeName, theirs?.methodKind],
      [`${CRI_PACKAGE}.${m.request}`, `${CRI_PACKAGE}.${m.response}`, 'unary'],
      `${name}(${m.request}) returns ${m.response}, unary`,
    );
  }
});

t.test('StopContainer as a gRPC server reads it with cri-api; NotFound in our words', { skip }, async (t) => {
  const server = await startCriServer({ known: (id) => id !== 'gone' });
  t.teardown(() => server.close());
  const cri = criClient(server.socket);
  t.teardown(() => cri.close());
  await cri.stopContainer('c0ffee', 0, 5000);
  await cri.stopContainer('c0ffee-2', 30, 5000);
  t.same(
    server.stops.map((r) => [r.containerId, r.timeout]),
    [
      ['c0ffee', 0n],
      ['c0ffee-2', 30n],
    ],
    'container_id and timeout as cri-api reads them',
  );
  t.equal(
    await (
      await startCriServer({ runtimeName: 'cri-o' }).then((s) => (t.teardown(() => s.close()), criClient(s.socket)))
    ).runtimeName(5000),
    'cri-o',
    "Version's runtime_name",
  );
  const err = (await cri.stopContainer('gone', 0, 5000).catch((e: unknown) => e)) as GrpcError;
  t.ok(err instanceof GrpcError);
  t.same(
    [err.kind, err.code, err.message],
    ['status', 5, 'the runtime answered NOT_FOUND (gRPC status 5)'],
    "the runtime's own message is not passed on",
  );
});

t.test("the default socket: the registered runtime's own, else the first that exists", async (t) => {
  const having =
    (...paths: string[]) =>
    (p: string) =>
      paths.includes(p);
  const [containerd, crio] = [CRI_SOCKETS.containerd!, CRI_SOCKETS['cri-o']!];
  t.same([containerd, crio], ['/run/containerd/containerd.sock', '/var/run/crio/crio.sock']);
  t.equal(defaultCriSocket('containerd', having(containerd, crio)), containerd);
  t.equal(defaultCriSocket('cri-o', having(containerd, crio)), crio);
  t.equal(defaultCriSocket('cri-o', having(containerd)), containerd, 'its own is absent: the one there is');
  t.equal(defaultCriSocket(undefined, having(crio)), crio);
  t.equal(defaultCriSocket('other', having(containerd, crio)), containerd, 'an unknown runtime: the first that exists');
  t.equal(defaultCriSocket('containerd', having()), undefined, 'none');
});
