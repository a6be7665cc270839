// Every message and field of ours (src/nri/wire/nri-schema.ts, as descriptors) against the protocol's own
// files from Debian sid: NRI 0.8.0's pkg/api/api.proto and ttRPC's request.proto, compiled by
// protoc into descriptor sets at test time (never copied into the repository). What the table
// marks as added by a later NRI (`since`) must be absent from 0.8.0: neither the message, nor
// the field's number or name, nor the method.
import t, { type Test } from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { fromBinary } from '@bufbuild/protobuf';
import { FileDescriptorSetSchema, type DescriptorProto, type FileDescriptorSet } from '@bufbuild/protobuf/wkt';
import { sidPackage } from '../../../scripts/debian-sid.mjs';
import { FILE_SET } from '../../../src/nri/wire/descriptors.ts';
import {
  EVENT_CREATE_CONTAINER,
  EVENT_STOP_POD_SANDBOX,
  eventMask,
  NRI_FILE,
  NRI_PACKAGE,
  PLUGIN_METHODS,
  RUNTIME_METHODS,
  type FileFact,
  type MethodFact,
} from '../../../src/nri/wire/nri-schema.ts';

const GOCODE = 'usr/share/gocode/src';

function compile(includeDir: string, file: string, out: string): FileDescriptorSet {
  execFileSync('protoc', ['--include_imports', `--descriptor_set_out=${out}`, '-I', includeDir, file], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  return fromBinary(FileDescriptorSetSchema, fs.readFileSync(out));
}

/** Every message of a set by its full name (nested ones included), e.g. `.ttrpc.Request`. */
function messagesOf(set: FileDescriptorSet): Map<string, DescriptorProto> {
  const out = new Map<string, DescriptorProto>();
  const walk = (prefix: string, msgs: DescriptorProto[]) => {
    for (const m of msgs) {
      out.set(`${prefix}.${m.name}`, m);
      walk(`${prefix}.${m.name}`, m.nestedType);
    }
  };
  for (const f of set.file) walk(f.package ? `.${f.package}` : '', f.messageType);
  return out;
}

const ours = messagesOf(FILE_SET);

/**
 * Our messages of package `pkg` against theirs: `compared` fields equal, `absent` messages and
 * fields marked `since` (in `facts`) checked to be missing upstream.
 */
function compareFile(
  t: Test,
  pkg: string,
  theirs: Map<string, DescriptorProto>,
  rename: (name: string) => string = (n) => n,
  facts?: FileFact,
) {
  let fields = 0;
  let absent = 0;
  for (const [name, msg] of ours) {
    if (!name.startsWith(`.${pkg}.`)) continue;
    const local = name.slice(pkg.length + 2);
    const since = facts?.since?.[local];
    if (since) {
      t.notOk(theirs.has(rename(name)), `${name} (new in ${since}) is absent upstream`);
      absent++;
      continue;
    }
    const other = theirs.get(rename(name));
    if (!t.ok(other, `${name} exists upstream`)) continue;
    t.equal(msg.options?.mapEntry ?? false, other!.options?.mapEntry ?? false, `${name}: map entry or not`);
    for (const f of msg.field) {
      const fieldSince = facts?.messages[local]?.find((x) => x.name === f.name)?.since;
      if (fieldSince) {
        t.notOk(
          other!.field.some((x) => x.number === f.number || x.name === f.name),
          `${name}.${f.name} (${f.number}, new in ${fieldSince}): neither its number nor its name upstream`,
        );
        absent++;
        continue;
      }
      const o = other!.field.find((x) => x.number === f.number);
      if (!t.ok(o, `${name}.${f.name} (${f.number}) exists upstream`)) continue;
      t.same(
        { name: o!.name, number: o!.number, type: o!.type, label: o!.label, typeName: o!.typeName },
        { name: f.name, number: f.number, type: f.type, label: f.label, typeName: f.typeName ? rename(f.typeName) : '' },
        `${name}.${f.name}: name, number, type, label, message type`,
      );
      fields++;
    }
  }
  return { compared: fields, absent };
}

t.test('NRI messages and fields match NRI 0.8.0 api.proto (Debian sid)', async (t) => {
  const root = path.join(sidPackage('golang-github-containerd-nri-dev'), GOCODE);
  const set = compile(root, 'github.com/containerd/nri/pkg/api/api.proto', path.join(t.testdir(), 'nri.pb'));
  const n = compareFile(t, NRI_PACKAGE, messagesOf(set), undefined, NRI_FILE);
  t.ok(n.compared >= 40, `${n.compared} NRI fields compared`);
  const marked =
    Object.keys(NRI_FILE.since ?? {}).length +
    Object.values(NRI_FILE.messages)
      .flat()
      .filter((f) => f.since).length;
  t.equal(n.absent, marked, `every one of the ${marked} messages and fields marked as newer checked absent`);
  // The methods envhook serves and calls: as named, with our request and response messages;
  // those marked newer are not in 0.8.0.
  const api = set.file.find((f) => f.package === NRI_PACKAGE)!;
  const services: [string, Record<string, MethodFact>][] = [
    ['Plugin', PLUGIN_METHODS],
    ['Runtime', RUNTIME_METHODS],
  ];
  for (const [service, methods] of services) {
    const theirs = api.service.find((s) => s.name === service)!;
    for (const [name, m] of Object.entries(methods)) {
      t.ok(
        ours.has(`.${NRI_PACKAGE}.${m.request}`) && ours.has(`.${NRI_PACKAGE}.${m.response}`),
        `${service}.${name}: its messages are in our table`,
      );
      const other = theirs.method.find((x) => x.name === name);
      if (m.since) t.notOk(other, `${service}.${name} (new in ${m.since}) is absent upstream`);
      else
        t.same(
          [other?.inputType, other?.outputType],
          [`.${NRI_PACKAGE}.${m.request}`, `.${NRI_PACKAGE}.${m.response}`],
          `${service}.${name}(${m.request}) returns ${m.response}`,
        );
    }
  }
  // Our enums (Event, ContainerState): every value we name has that number upstream, and the
  // fields that use them are enum fields upstream too (compareFile checked type and type name).
  const ourEnums = FILE_SET.file.find((f) => f.package === NRI_PACKAGE)!.enumType;
  t.same(ourEnums.map((e) => e.name).sort(), ['ContainerState', 'Event']);
  for (const e of ourEnums) {
    const theirs = api.enumType.find((x) => x.name === e.name);
    if (!t.ok(theirs, `enum ${e.name} exists upstream`)) continue;
    for (const v of e.value) t.equal(theirs!.value.find((x) => x.name === v.name)?.number, v.number, `${e.name}.${v.name} = ${v.number}`);
  }
  t.equal(EVENT_CREATE_CONTAINER, 4, 'Event CREATE_CONTAINER = 4');
  t.equal(eventMask(EVENT_CREATE_CONTAINER, EVENT_STOP_POD_SANDBOX), 0xa, 'CreateContainer and StopPodSandbox: mask 0xa');
});

t.test('ttRPC Request, Response and KeyValue match ttRPC request.proto (Debian sid)', async (t) => {
  const root = path.join(sidPackage('golang-github-containerd-ttrpc-dev'), GOCODE, 'github.com/containerd/ttrpc');
  const set = compile(root, 'request.proto', path.join(t.testdir(), 'ttrpc.pb'));
  const theirs = messagesOf(set);
  // ttRPC's own copy of Status has no package (`.Status`) and only `code`; ours is google.rpc.Status,
  // whose `message` (2) ttRPC's Go code fills from google.golang.org/genproto (not in that copy).
  const rename = (n: string) => (n === '.google.rpc.Status' ? '.Status' : n);
  const n = compareFile(t, 'ttrpc', theirs, rename);
  t.equal(n.compared, 9, 'every ttRPC field compared');
  const status = theirs.get('.Status')!;
  t.same(
    status.field.map((f) => [f.name, f.number, f.type]),
    [['code', 1, ours.get('.google.rpc.Status')!.field[0]!.type]],
    'Status.code = 1, int32',
  );
});
