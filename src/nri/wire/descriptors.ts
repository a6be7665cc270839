// Descriptors built from the tables in nri-schema.ts and cri-schema.ts, and the message codecs
// envhook uses. A map field becomes what protoc makes of `map<string, string>`: a repeated
// nested `<Name>Entry` message (key 1, value 2) marked map_entry.
import { create, createFileRegistry, fromBinary, fromJson, toBinary, type DescMessage } from '@bufbuild/protobuf';
import {
  FileDescriptorSetSchema,
  type DescriptorProtoJson,
  type EnumDescriptorProtoJson,
  type FieldDescriptorProtoJson,
  type FileDescriptorProtoJson,
} from '@bufbuild/protobuf/wkt';
import { EnvhookError } from '../../errors.ts';
import { CRI_FILE } from './cri-schema.ts';
import { NRI_FILE, STATUS_FILE, TTRPC_FILE, type FieldFact, type FileFact } from './nri-schema.ts';

const SCALAR = {
  string: 'TYPE_STRING',
  bytes: 'TYPE_BYTES',
  bool: 'TYPE_BOOL',
  int32: 'TYPE_INT32',
  uint32: 'TYPE_UINT32',
  int64: 'TYPE_INT64',
} as const;

const entryName = (field: string): string => field.replace(/(?:^|_)([a-z])/g, (_, c: string) => c.toUpperCase()) + 'Entry';

function fieldJson(f: FieldFact, owner: string, enums: ReadonlySet<string> = new Set()): FieldDescriptorProtoJson {
  const base = { name: f.name, number: f.number, jsonName: f.name.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase()) };
  if (f.type === 'map') return { ...base, label: 'LABEL_REPEATED', type: 'TYPE_MESSAGE', typeName: `${owner}.${entryName(f.name)}` };
  const label = f.repeated ? 'LABEL_REPEATED' : 'LABEL_OPTIONAL';
  if (f.type.startsWith('.')) return { ...base, label, type: enums.has(f.type) ? 'TYPE_ENUM' : 'TYPE_MESSAGE', typeName: f.type };
  return { ...base, label, type: SCALAR[f.type as keyof typeof SCALAR] };
}

function fileJson(file: FileFact): FileDescriptorProtoJson {
  const enums = new Set(Object.keys(file.enums ?? {}).map((name) => `.${file.package}.${name}`));
  const enumType: EnumDescriptorProtoJson[] = Object.entries(file.enums ?? {}).map(([name, values]) => ({
    name,
    value: Object.entries(values).map(([value, number]) => ({ name: value, number })),
  }));
  const messageType: DescriptorProtoJson[] = Object.entries(file.messages).map(([name, fields]) => {
    const owner = `.${file.package}.${name}`;
    const nestedType: DescriptorProtoJson[] = fields
      .filter((f) => f.type === 'map')
      .map((f) => ({
        name: entryName(f.name),
        field: [fieldJson({ name: 'key', number: 1, type: 'string' }, ''), fieldJson({ name: 'value', number: 2, type: 'string' }, '')],
        options: { mapEntry: true },
      }));
    return { name, field: fields.map((f) => fieldJson(f, owner, enums)), ...(nestedType.length ? { nestedType } : {}) };
  });
  return {
    name: file.name,
    package: file.package,
    dependency: file.dependency,
    messageType,
    ...(enumType.length ? { enumType } : {}),
    syntax: 'proto3',
  };
}

/** Our files as one FileDescriptorSet (also what the schema tests compare): NRI, ttRPC, and the CRI call envhook makes. */
export const FILE_SET = fromJson(FileDescriptorSetSchema, { file: [STATUS_FILE, TTRPC_FILE, NRI_FILE, CRI_FILE].map(fileJson) });
const registry = createFileRegistry(FILE_SET);

function message(typeName: string): DescMessage {
  const desc = registry.getMessage(typeName);
  if (!desc) throw new Error(`envhook: no descriptor for ${typeName}`);
  return desc;
}

export const Msg = {
  Empty: message('nri.pkg.api.v1alpha1.Empty'),
  RegisterPluginRequest: message('nri.pkg.api.v1alpha1.RegisterPluginRequest'),
  ConfigureRequest: message('nri.pkg.api.v1alpha1.ConfigureRequest'),
  ConfigureResponse: message('nri.pkg.api.v1alpha1.ConfigureResponse'),
  SynchronizeRequest: message('nri.pkg.api.v1alpha1.SynchronizeRequest'),
  SynchronizeResponse: message('nri.pkg.api.v1alpha1.SynchronizeResponse'),
  CreateContainerRequest: message('nri.pkg.api.v1alpha1.CreateContainerRequest'),
  CreateContainerResponse: message('nri.pkg.api.v1alpha1.CreateContainerResponse'),
  StateChangeEvent: message('nri.pkg.api.v1alpha1.StateChangeEvent'),
  StopPodSandboxRequest: message('nri.pkg.api.v1alpha1.StopPodSandboxRequest'),
  StopPodSandboxResponse: message('nri.pkg.api.v1alpha1.StopPodSandboxResponse'),
  RemovePodSandboxRequest: message('nri.pkg.api.v1alpha1.RemovePodSandboxRequest'),
  RemovePodSandboxResponse: message('nri.pkg.api.v1alpha1.RemovePodSandboxResponse'),
  PostCreateContainerRequest: message('nri.pkg.api.v1alpha1.PostCreateContainerRequest'),
  PostCreateContainerResponse: message('nri.pkg.api.v1alpha1.PostCreateContainerResponse'),
  StopContainerRequest: message('runtime.v1.StopContainerRequest'),
  StopContainerResponse: message('runtime.v1.StopContainerResponse'),
  VersionRequest: message('runtime.v1.VersionRequest'),
  VersionResponse: message('runtime.v1.VersionResponse'),
  Request: message('ttrpc.Request'),
  Response: message('ttrpc.Response'),
} as const;

// The shapes @bufbuild/protobuf gives these generic messages (fields by their local names).
interface KeyValueShape {
  key: string;
  value: string;
}
export interface MountShape {
  destination: string;
  type: string;
  source: string;
  options: string[];
}
export interface PodSandboxShape {
  id: string;
  name: string;
  uid: string;
  namespace: string;
  annotations: Record<string, string>;
  runtimeHandler: string;
}
export interface ContainerShape {
  id: string;
  podSandboxId: string;
  name: string;
  /** NRI's ContainerState (0 when the runtime did not say). */
  state: number;
  annotations: Record<string, string>;
  env: string[];
  mounts: MountShape[];
  /** Its process on the host (0 before it starts, or when the runtime does not say). */
  pid: number;
  linux?: { namespaces: { type: string; path: string }[] } | undefined;
}
export interface CreateContainerRequestShape {
  pod?: PodSandboxShape | undefined;
  container?: ContainerShape | undefined;
}
/** `NRIVersion` is '' from a runtime before NRI 0.12 (it has no such field). */
export interface ConfigureRequestShape {
  config: string;
  runtimeName: string;
  runtimeVersion: string;
  registrationTimeout: bigint;
  requestTimeout: bigint;
  NRIVersion: string;
}
export interface RegisterPluginRequestShape {
  pluginName: string;
  pluginIdx: string;
  NRIVersion: string;
}
export interface SynchronizeRequestShape {
  pods: PodSandboxShape[];
  containers: ContainerShape[];
  more: boolean;
}
export interface StateChangeEventShape {
  event: number;
  pod?: PodSandboxShape | undefined;
  container?: ContainerShape | undefined;
}
/** StopPodSandboxRequest and RemovePodSandboxRequest. */
export interface VersionResponseShape {
  version: string;
  runtimeName: string;
  runtimeVersion: string;
  runtimeApiVersion: string;
}
export interface PodSandboxRequestShape {
  pod?: PodSandboxShape | undefined;
}
/** PostCreateContainerRequest. */
export interface ContainerRequestShape {
  pod?: PodSandboxShape | undefined;
  container?: ContainerShape | undefined;
}
export interface RequestShape {
  service: string;
  method: string;
  payload: Uint8Array;
  timeoutNano: bigint;
  metadata: KeyValueShape[];
}
interface StatusShape {
  code: number;
  message: string;
}
export interface ResponseShape {
  status?: StatusShape | undefined;
  payload: Uint8Array;
}

/** Decodes `bytes` as `desc`; a malformed message is an EnvhookError (never its bytes). */
export function decode<T>(desc: DescMessage, bytes: Uint8Array): T {
  try {
    return fromBinary(desc, bytes, { readUnknownFields: false }) as unknown as T;
  } catch (cause) {
    throw new EnvhookError(`malformed ${desc.name} message (${bytes.length} bytes)`, { cause: new Error('protobuf decode error') });
  }
}

export function encode(desc: DescMessage, init: Record<string, unknown>): Uint8Array {
  return toBinary(desc, create(desc, init as never));
}
