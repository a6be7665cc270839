// The two messages envhook writes for every CreateContainer, encoded straight from its plain
// data: the CreateContainerResponse (the adjustment: a typical pod's is a hundred variables) and
// the ttRPC Response that carries it. Encoding them through @bufbuild/protobuf's reflection first
// built a message object for each variable, and was about a tenth of the worker's time a
// request (bench/nri-figures.md). The bytes are those the reflective encoder writes (fields in
// number order, proto3's empty strings left out, map entries with key and value): the field
// numbers are read from descriptors.ts's own descriptors, and test/nri/wire/reply-encoder.test.ts
// compares both encodings and decodes these back with the reflective decoder.
import { BinaryWriter, WireType } from '@bufbuild/protobuf/wire';
import type { DescMessage } from '@bufbuild/protobuf';
import type { NriAdjustment } from '../../apply/nri-adjustment.ts';
import { Msg } from './descriptors.ts';

/** Field `local` of `desc`: its number, and its message type when it has one. */
function field(desc: DescMessage, local: string): { no: number; message: DescMessage | undefined } {
  const f = desc.field[local];
  if (f === undefined) throw new Error(`envhook: no field ${local} in ${desc.typeName}`);
  return { no: f.number, message: f.message };
}

const ADJUST = field(Msg.CreateContainerResponse, 'adjust');
const ADJUSTMENT = ADJUST.message!;
const ANNOTATIONS = field(ADJUSTMENT, 'annotations').no;
const MOUNTS = field(ADJUSTMENT, 'mounts');
const ENV = field(ADJUSTMENT, 'env');
const MOUNT = {
  destination: field(MOUNTS.message!, 'destination').no,
  type: field(MOUNTS.message!, 'type').no,
  source: field(MOUNTS.message!, 'source').no,
  options: field(MOUNTS.message!, 'options').no,
};
const KEY = field(ENV.message!, 'key').no;
const VALUE = field(ENV.message!, 'value').no;
const RESPONSE_PAYLOAD = field(Msg.Response, 'payload').no;
// A map<string, string> entry: key 1, value 2, as protoc makes it (descriptors.ts).
const ENTRY_KEY = 1;
const ENTRY_VALUE = 2;
const LEN = WireType.LengthDelimited;

/** A proto3 string field: left out when empty. */
function text(w: BinaryWriter, no: number, value: string): void {
  if (value !== '') w.tag(no, LEN).string(value);
}

function keyValue(w: BinaryWriter, key: string, value: string): void {
  w.tag(ENV.no, LEN).fork();
  text(w, KEY, key);
  text(w, VALUE, value);
  w.join();
}

/**
 * CreateContainerResponse { adjust: the adjustment }: its annotations, the mounts that replace
 * the container's (owned copies), then the env: removals first (NRI's `-NAME` with no value), so
 * that a name both removed and set ends up set.
 */
export function encodeCreateContainerResponse(adj: NriAdjustment): Uint8Array {
  const w = new BinaryWriter();
  w.tag(ADJUST.no, LEN).fork();
  for (const key of Object.keys(adj.annotations)) {
    w.tag(ANNOTATIONS, LEN).fork().tag(ENTRY_KEY, LEN).string(key).tag(ENTRY_VALUE, LEN).string(adj.annotations[key]!).join();
  }
  for (const m of adj.mounts ?? []) {
    w.tag(MOUNTS.no, LEN).fork();
    text(w, MOUNT.destination, m.destination);
    text(w, MOUNT.type, m.type);
    text(w, MOUNT.source, m.source);
    for (const o of m.options) w.tag(MOUNT.options, LEN).string(o);
    w.join();
  }
  for (const name of adj.removeEnv) keyValue(w, `-${name}`, '');
  for (const { key, value } of adj.env) keyValue(w, key, value);
  return w.join().finish();
}

/** A ttRPC Response with this payload and no status (success): the payload's bytes after one field header. */
export function encodeResponsePayload(payload: Uint8Array): Uint8Array {
  if (payload.length === 0) return new Uint8Array(0);
  const head = new BinaryWriter().tag(RESPONSE_PAYLOAD, LEN).uint32(payload.length).finish();
  const out = new Uint8Array(head.length + payload.length);
  out.set(head);
  out.set(payload, head.length);
  return out;
}
