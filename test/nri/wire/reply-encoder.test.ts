// The reply messages encoded directly: byte for byte what @bufbuild/protobuf's reflective encoder
// writes for the same message from descriptors.ts, and decoded back by the reflective decoder as
// NRI reads them (removals as -NAME first, then the variables in order; annotations; mounts).
import t from 'tap';
import fc from 'fast-check';
import { decode, encode, Msg, type ResponseShape } from '../../../src/nri/wire/descriptors.ts';
import { encodeCreateContainerResponse, encodeResponsePayload } from '../../../src/nri/wire/reply-encoder.ts';
import type { NriAdjustment } from '../../../src/apply/nri-adjustment.ts';

/** The adjustment as NRI's ContainerAdjustment, built field by field for the reflective encoder. */
function reflective(adj: NriAdjustment): Uint8Array {
  const adjust = {
    annotations: { ...adj.annotations },
    env: [...adj.removeEnv.map((name) => ({ key: `-${name}`, value: '' })), ...adj.env],
    ...(adj.mounts?.length ? { mounts: adj.mounts.map((m) => ({ ...m, options: [...m.options] })) } : {}),
  };
  return encode(Msg.CreateContainerResponse, { adjust });
}

interface Decoded {
  adjust: {
    env: { key: string; value: string }[];
    annotations: Record<string, string>;
    mounts: { destination: string; type: string; source: string; options: string[] }[];
  };
}

const name = fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,8}$/);
// Any text, empty and non-ASCII included (the UTF-8 of a value, of a key of more than 127 bytes).
const text = fc.oneof(fc.string(), fc.string({ unit: 'grapheme', maxLength: 200 }), fc.constant(''));
const mount = fc.record({ destination: text, source: text, type: text, options: fc.array(text, { maxLength: 4 }) });
const adjustment = fc.record({
  env: fc.array(fc.record({ key: name, value: text }), { maxLength: 150 }),
  removeEnv: fc.array(name, { maxLength: 5 }),
  annotations: fc.dictionary(fc.string({ minLength: 1 }), text, { maxKeys: 3 }),
  mounts: fc.option(fc.array(mount, { maxLength: 3 }), { nil: undefined }),
});

t.test('CreateContainerResponse: the reflective encoding, byte for byte; NRI reads it back', async (t) => {
  fc.assert(
    fc.property(adjustment, (adj) => {
      const ours = encodeCreateContainerResponse(adj);
      if (Buffer.compare(Buffer.from(ours), Buffer.from(reflective(adj))) !== 0) return false;
      const back = decode<Decoded>(Msg.CreateContainerResponse, ours).adjust;
      const want = [...adj.removeEnv.map((n) => ({ key: `-${n}`, value: '' })), ...adj.env];
      return (
        JSON.stringify(back.env.map(({ key, value }) => ({ key, value }))) === JSON.stringify(want) &&
        JSON.stringify({ ...back.annotations }) === JSON.stringify(adj.annotations) &&
        JSON.stringify(back.mounts.map(({ destination, type, source, options }) => ({ destination, source, type, options }))) ===
          JSON.stringify(adj.mounts ?? [])
      );
    }),
    { numRuns: 300 },
  );
  t.pass('300 random adjustments');
});

t.test("the typical pod's adjustment, the empty one, the mark alone", async (t) => {
  const typical: NriAdjustment = {
    env: Array.from({ length: 111 }, (_, i) => ({ key: `A_VAR_${i}`, value: `value-${i}-${'x'.repeat(16)}` })),
    removeEnv: [],
    annotations: { 'envhook.io/applied': `sha256:${'a'.repeat(64)}` },
    mounts: [{ destination: '/certs', source: '/run/envhook/volumes/u/certs', type: 'bind', options: ['rbind', 'ro'] }],
  };
  const cases: [string, NriAdjustment][] = [
    ['typical', typical],
    ['empty', { env: [], removeEnv: [], annotations: {} }],
    ['mark only', { env: [], removeEnv: [], annotations: { 'envhook.io/applied': 'sha256:x' } }],
    ['a value of 200 bytes', { env: [{ key: 'K', value: 'v'.repeat(200) }], removeEnv: ['GONE'], annotations: {} }],
  ];
  for (const [what, adj] of cases) {
    t.same(Buffer.from(encodeCreateContainerResponse(adj)), Buffer.from(reflective(adj)), what);
  }
  t.equal(encodeCreateContainerResponse({ env: [], removeEnv: [], annotations: {} }).length, 2, 'an empty adjustment is still sent');
});

t.test('ttRPC Response: the payload after its field header, as the reflective encoder writes it', async (t) => {
  for (const size of [0, 1, 127, 128, 4820, 20_000]) {
    const payload = Uint8Array.from({ length: size }, (_, i) => i % 251);
    const ours = encodeResponsePayload(payload);
    t.same(Buffer.from(ours), Buffer.from(encode(Msg.Response, { payload })), `${size} bytes`);
    const back = decode<ResponseShape>(Msg.Response, ours);
    t.equal(back.status, undefined, 'no status: success');
    t.same(Buffer.from(back.payload), Buffer.from(payload));
  }
});
