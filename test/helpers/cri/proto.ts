// cri-api's runtime/v1 messages for a kubelet-like CRI client: api.proto from Debian sid's
// golang-k8s-cri-api-dev (scripts/debian-sid.mjs; never copied into the repository), turned
// into a descriptor set by protoc at test time and loaded with @bufbuild/protobuf.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { createFileRegistry, fromBinary, type DescMessage, type FileRegistry } from '@bufbuild/protobuf';
import { FileDescriptorSetSchema } from '@bufbuild/protobuf/wkt';
import { sidPackage } from '../../../scripts/debian-sid.mjs';
import { whichSync } from '../bundle.ts';

const CRI_API_PACKAGE = 'golang-k8s-cri-api-dev';
const PROTO_DIR = 'usr/share/gocode/src/k8s.io/cri-api/pkg/apis/runtime/v1';

/** Why the CRI client cannot be built here, or undefined (protoc present; the sid package fetched on demand). */
export function missingForCriProto(): string | undefined {
  if (!whichSync('protoc')) return 'protoc not installed (apt-get install protobuf-compiler)';
  return undefined;
}

let registry: FileRegistry | undefined;

/** The registry of runtime.v1 (one protoc run a process). */
export function criRegistry(): FileRegistry {
  if (registry) return registry;
  const source = fs.readFileSync(path.join(sidPackage(CRI_API_PACKAGE), PROTO_DIR, 'api.proto'), 'utf8');
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'envhook-cri-proto-'));
  try {
    // Debian 12's protoc (3.21) predates the `debug_redact` field option (protobuf 22) that
    // cri-api puts on AuthConfig's secrets; it only changes text-format printing, never the wire.
    fs.writeFileSync(path.join(tmp, 'api.proto'), source.replace(/\s*\[debug_redact = true\]/g, ''));
    const out = path.join(tmp, 'cri.pb');
    execFileSync('protoc', ['--include_imports', `--descriptor_set_out=${out}`, '-I', tmp, 'api.proto'], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    registry = createFileRegistry(fromBinary(FileDescriptorSetSchema, fs.readFileSync(out)));
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  return registry;
}

/** A message type of runtime.v1 by its short name (`RunPodSandboxRequest`). */
export function criMessage(name: string): DescMessage {
  const desc = criRegistry().getMessage(`runtime.v1.${name}`);
  if (!desc) throw new Error(`cri-api: no message runtime.v1.${name} in api.proto`);
  return desc;
}
