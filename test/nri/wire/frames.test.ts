// The multiplexer and ttRPC framing against bytes recorded from containerd 2.1.9 (NRI 0.8.0)
// talking to `envhook nri` (test/nri/record-frames.ts), then the limits and malformed input.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { decode, encode, Msg, type RequestShape, type ResponseShape } from '../../../src/nri/wire/descriptors.ts';
import {
  encodeMux,
  encodeTtrpc,
  MessageType,
  MUX_HEADER,
  MUX_MAX,
  MUX_WRITE_MAX,
  MuxDecoder,
  PLUGIN_CONN,
  ProtocolError,
  RUNTIME_CONN,
  TTRPC_MAX,
  TtrpcDecoder,
  type TtrpcFrame,
} from '../../../src/nri/wire/frames.ts';
import { NRI_API_VERSION, PLUGIN_SERVICE, RUNTIME_SERVICE } from '../../../src/nri/wire/nri-schema.ts';

const fixture = JSON.parse(fs.readFileSync(path.join(import.meta.dirname, '../../fixtures/nri/containerd-2.1.9.json'), 'utf8')) as {
  chunks: { from: 'plugin' | 'runtime'; hex: string }[];
};
const stream = (from: string) => Buffer.concat(fixture.chunks.filter((c) => c.from === from).map((c) => Buffer.from(c.hex, 'hex')));

/** Every ttRPC frame of a byte stream, by connection, fed in pieces of `step` bytes. */
function frames(bytes: Buffer, step: number): { conn: number; frame: TtrpcFrame }[] {
  const mux = new MuxDecoder();
  const ttrpc = new Map<number, TtrpcDecoder>();
  const out: { conn: number; frame: TtrpcFrame }[] = [];
  for (let i = 0; i < bytes.length; i += step) {
    for (const { conn, payload } of mux.push(bytes.subarray(i, i + step))) {
      if (!ttrpc.has(conn)) ttrpc.set(conn, new TtrpcDecoder());
      for (const frame of ttrpc.get(conn)!.push(payload)) out.push({ conn, frame });
    }
  }
  return out;
}

t.test("containerd's side: RegisterPlugin answered on conn 2, Configure and Synchronize called on conn 1", async (t) => {
  for (const step of [1, 3, 7, 1 << 20]) {
    const got = frames(stream('runtime'), step);
    t.same(
      got.map(({ conn, frame }) => [conn, frame.streamId, frame.type, frame.flags]),
      [
        [RUNTIME_CONN, 1, MessageType.Response, 0],
        [PLUGIN_CONN, 1, MessageType.Request, 0],
        [PLUGIN_CONN, 3, MessageType.Request, 0],
      ],
      `conn ids, stream ids, types (pieces of ${step} bytes)`,
    );
    const register = decode<ResponseShape>(Msg.Response, got[0]!.frame.payload);
    t.equal(register.status, undefined, 'RegisterPlugin: no error status');
    const configure = decode<RequestShape>(Msg.Request, got[1]!.frame.payload);
    t.match(configure, { service: PLUGIN_SERVICE, method: 'Configure' });
    t.match(decode(Msg.ConfigureRequest, configure.payload), {
      runtimeName: 'containerd',
      runtimeVersion: /^2\.1\.9/,
      registrationTimeout: 5000n,
      requestTimeout: 2000n,
    });
    t.ok(configure.timeoutNano > 0n, 'the runtime sends its deadline');
    const sync = decode<RequestShape>(Msg.Request, got[2]!.frame.payload);
    t.match(sync, { service: PLUGIN_SERVICE, method: 'Synchronize' });
    t.match(decode(Msg.SynchronizeRequest, sync.payload), { more: false });
  }
});

t.test("envhook's side, re-encoded byte for byte", async (t) => {
  const got = frames(stream('plugin'), 5);
  t.same(
    got.map(({ conn, frame }) => [conn, frame.streamId, frame.type]),
    [
      [RUNTIME_CONN, 1, MessageType.Request],
      [PLUGIN_CONN, 1, MessageType.Response],
      [PLUGIN_CONN, 3, MessageType.Response],
    ],
  );
  const ours = Buffer.concat([
    ...encodeMux(
      RUNTIME_CONN,
      encodeTtrpc({
        streamId: 1,
        type: MessageType.Request,
        payload: encode(Msg.Request, {
          service: RUNTIME_SERVICE,
          method: 'RegisterPlugin',
          payload: encode(Msg.RegisterPluginRequest, {
            pluginName: 'envhook',
            pluginIdx: '50',
          }),
          timeoutNano: 5_000_000_000n,
        }),
      }),
    ),
    ...encodeMux(
      PLUGIN_CONN,
      encodeTtrpc({
        streamId: 1,
        type: MessageType.Response,
        payload: encode(Msg.Response, { payload: encode(Msg.ConfigureResponse, { events: 8 }) }),
      }),
    ),
    ...encodeMux(
      PLUGIN_CONN,
      encodeTtrpc({
        streamId: 3,
        type: MessageType.Response,
        payload: encode(Msg.Response, { payload: encode(Msg.SynchronizeResponse, { more: false }) }),
      }),
    ),
  ]);
  t.equal(ours.toString('hex'), stream('plugin').toString('hex'), 'the recorded bytes');
});

/** A length-delimited protobuf field (wire type 2) of under 128 bytes, laid out by hand. */
const ld = (field: number, value: string | Buffer): Buffer => {
  const bytes = Buffer.from(value);
  return Buffer.concat([Buffer.from([(field << 3) | 2, bytes.length]), bytes]);
};

// No NRI 0.12 runtime is recorded here (containerd >= 2.3 is not in Debian): its messages are laid
// out from NRI 0.12's field numbers by hand, independently of src/nri/wire/nri-schema.ts.
t.test('NRI 0.12: the messages envhook sends and reads, byte for byte', async (t) => {
  const register = Buffer.concat([ld(1, 'envhook'), ld(2, '50'), ld(3, 'v0.12.0')]);
  t.equal(NRI_API_VERSION, 'v0.12.0');
  t.equal(
    Buffer.from(encode(Msg.RegisterPluginRequest, { pluginName: 'envhook', pluginIdx: '50', NRIVersion: NRI_API_VERSION })).toString('hex'),
    register.toString('hex'),
    'RegisterPluginRequest: NRI_version is field 3',
  );

  // containerd 2.3's Configure: runtime name 2, version 3, timeouts 4 and 5 (varints 5000, 2000), NRI_version 6.
  const configure = Buffer.concat([ld(2, 'containerd'), ld(3, '2.3.4'), Buffer.from('208827' + '28d00f', 'hex'), ld(6, 'v0.12.0')]);
  t.match(decode(Msg.ConfigureRequest, configure), {
    runtimeName: 'containerd',
    runtimeVersion: '2.3.4',
    registrationTimeout: 5000n,
    requestTimeout: 2000n,
    NRIVersion: 'v0.12.0',
  });

  // Plugin/StopPodSandbox in a ttRPC frame on connection 1, as the runtime sends it.
  const pod = Buffer.concat([ld(1, 'sandbox-1'), ld(2, 'web'), ld(3, 'a1b2-uid'), ld(4, 'default')]);
  const request = Buffer.concat([ld(1, PLUGIN_SERVICE), ld(2, 'StopPodSandbox'), ld(3, ld(1, pod))]);
  const [got] = frames(Buffer.concat(encodeMux(PLUGIN_CONN, encodeTtrpc({ streamId: 7, type: MessageType.Request, payload: request }))), 3);
  t.same([got!.conn, got!.frame.streamId, got!.frame.type], [PLUGIN_CONN, 7, MessageType.Request]);
  const req = decode<RequestShape>(Msg.Request, got!.frame.payload);
  t.match(req, { service: 'nri.pkg.api.v1alpha1.Plugin', method: 'StopPodSandbox' });
  t.match(decode(Msg.StopPodSandboxRequest, req.payload), { pod: { id: 'sandbox-1', name: 'web', uid: 'a1b2-uid', namespace: 'default' } });
  t.equal(encode(Msg.StopPodSandboxResponse, {}).length, 0, 'StopPodSandboxResponse: empty');
  t.equal(encode(Msg.RemovePodSandboxResponse, {}).length, 0, 'RemovePodSandboxResponse: empty');
  t.match(
    decode(Msg.RemovePodSandboxRequest, ld(1, pod)),
    { pod: { id: 'sandbox-1', uid: 'a1b2-uid' } },
    'RemovePodSandboxRequest: pod is field 1',
  );

  t.same(ld(1, 'x'), Buffer.from('0a0178', 'hex'), 'the hand layout itself: tag 0x0a, length, bytes');
});

t.test('a mux frame over the limit is refused from its header, before its payload arrives', async (t) => {
  const header = Buffer.alloc(MUX_HEADER);
  header.writeUInt32BE(1, 0);
  header.writeUInt32BE(MUX_MAX + 1, 4);
  t.throws(
    () => new MuxDecoder().push(header),
    new ProtocolError(`multiplexer frame of ${MUX_MAX + 1} bytes exceeds the limit of ${MUX_MAX}`),
  );
  header.writeUInt32BE(MUX_MAX, 4);
  t.same(new MuxDecoder().push(header), [], 'at the limit: waits for the payload');
});

t.test('a ttRPC message over 4 MiB is refused, both ways; an unknown message type too', async (t) => {
  const h = Buffer.alloc(10);
  h.writeUInt32BE(TTRPC_MAX + 1, 0);
  t.throws(() => new TtrpcDecoder().push(h), /ttRPC message of 4194305 bytes exceeds the limit of 4194304/);
  t.throws(() => encodeTtrpc({ streamId: 1, type: 1, payload: new Uint8Array(TTRPC_MAX + 1) }), ProtocolError);
  const max = encodeTtrpc({ streamId: 1, type: 2, payload: new Uint8Array(TTRPC_MAX) });
  t.equal(new TtrpcDecoder().push(max)[0]!.payload.length, TTRPC_MAX, 'exactly 4 MiB passes');
  const odd = Buffer.from('00000000000000010900', 'hex');
  t.throws(() => new TtrpcDecoder().push(odd), /unknown ttRPC message type 9/);
});

t.test("writes go in frames of at most 4096 bytes, which the runtime's 4 KiB reader takes, and are read back whole", async (t) => {
  const big = Buffer.alloc(2 * MUX_WRITE_MAX + 100, 7);
  const parts = encodeMux(PLUGIN_CONN, big);
  t.equal(parts.length, 6, 'three frames');
  t.same([parts[0]!.readUInt32BE(4), parts[2]!.readUInt32BE(4), parts[4]!.readUInt32BE(4)], [4096, 4096, 100]);
  const got = new MuxDecoder().push(Buffer.concat(parts));
  t.same(
    got.map((f) => [f.conn, f.payload.length]),
    [
      [1, 4096],
      [1, 4096],
      [1, 100],
    ],
  );
  t.same(Buffer.concat(got.map((f) => f.payload)), big);
  t.equal(encodeMux(PLUGIN_CONN, Buffer.alloc(MUX_WRITE_MAX)).length, 2, 'exactly 4096: one frame');
  t.same(
    encodeMux(2, Buffer.alloc(0)).map((b) => b.length),
    [MUX_HEADER, 0],
    'an empty write is one empty frame',
  );
});
