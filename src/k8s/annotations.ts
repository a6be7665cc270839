// The envhook.io/* env annotations (docs/design.md#annotations): written by whoever writes the pod, so untrusted.
// Each is size-limited, parsed without ever echoing its text, and checked against its JSON
// Schema (src/schemas/*-annotation.schema.json) before any field is used.
import { EnvhookError, SchemaError } from '../errors.ts';
import { check, type SchemaMessages } from '../schema.ts';
import { lintsRefusal, schemaFields, schemaMessages } from './annotation-schema.ts';
import { parseLossless } from '../oci/json.ts';
import {
  validateEnvAnnotation,
  validateEnvFromAnnotation,
  validateServiceLinksAnnotation,
  type ValidateFunction,
} from '../generated/validators.js';
import type { Annotations } from './identity.ts';
import { ENV_FROM_KEY, ENV_KEY, SERVICE_LINKS_KEY } from './annotation-keys.ts';
import { BoundedMemo } from '../bounded-memo.ts';

/** Kubernetes caps all annotations of an object at 256 KiB together: no real pod exceeds it. */
export const ANNOTATION_LIMIT = 256 * 1024;

interface FileKeyRef {
  volumeName: string;
  path: string;
  key: string;
  optional?: boolean;
}
export interface FileRef {
  volumeName: string;
  path: string;
  optional?: boolean;
}
/** Exactly one of `fileKeyRef` (a key of an env file) and `fileRef` (a whole file as the value). */
export type ValueFrom = { fileKeyRef: FileKeyRef; fileRef?: undefined } | { fileRef: FileRef; fileKeyRef?: undefined };
export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: ValueFrom;
}

/** The source of a `valueFrom` entry, with the JSON field that names it. */
export function valueSource(from: ValueFrom): { field: 'fileKeyRef' | 'fileRef'; ref: FileRef } {
  return from.fileKeyRef ? { field: 'fileKeyRef', ref: from.fileKeyRef } : { field: 'fileRef', ref: from.fileRef! };
}
/** A directory of a volume (its top without `path`): each regular file one variable. */
export interface VolumeRef {
  volumeName: string;
  path?: string;
  optional?: boolean;
}
/** Exactly one of `fileRef` (an env file) and `volumeRef` (a volume's files). */
export type EnvFromSource = { prefix?: string } & (
  { fileRef: FileRef; volumeRef?: undefined } | { volumeRef: VolumeRef; fileRef?: undefined }
);

/** The source of an `envFrom` entry, with the JSON field that names it. */
export function fromSource(src: EnvFromSource): { field: 'fileRef' | 'volumeRef'; ref: FileRef | VolumeRef } {
  return src.fileRef ? { field: 'fileRef', ref: src.fileRef } : { field: 'volumeRef', ref: src.volumeRef! };
}

/** Parsed annotation value; undefined when the annotation is absent. Throws EnvhookError. */
export function readAnnotation(
  annotations: Annotations,
  key: string,
  validate: ValidateFunction,
  messages: SchemaMessages = schemaMessages(key),
): unknown {
  const text = annotations[key];
  if (text === undefined) return undefined;
  const where = `annotation ${JSON.stringify(key)}`;
  if (typeof text !== 'string') throw new EnvhookError(`${where}: must be a string`);
  const memo = `${key}\n${text}`;
  const known = readAnnotations.get(memo);
  if (known !== undefined) return known;
  if (Buffer.byteLength(text) > ANNOTATION_LIMIT) throw new EnvhookError(`${where}: larger than ${ANNOTATION_LIMIT} bytes`);
  // Lossless: `1000.0` or `1e3` stay raw and fail "must be integer", as Kubernetes' int64
  // fields do. A syntax error names a position, never the text (V8's message quotes it).
  const data = parseLossless(text, where);
  try {
    check(validate, data, where, messages, schemaFields(key));
  } catch (err) {
    // What `envhook lint` says of it: its own line, and how many more it lists.
    throw err instanceof SchemaError ? lintsRefusal(key, data, where, err) : err;
  }
  readAnnotations.set(memo, deepFreeze(data), memo.length);
  return data;
}

/**
 * Annotations read and valid, by key and text, as read (frozen: every reader shares them). A
 * pod's containers and restarts carry the same annotations, and the resident NRI plugin parsed
 * and validated them again at each CreateContainer (and more than once in one). Bounded in
 * entries and in text, the oldest dropped first; a refused annotation is read again each time.
 */
const readAnnotations = new BoundedMemo<unknown>(256, 1 << 20);

function deepFreeze<T>(v: T): T {
  if (typeof v === 'object' && v !== null && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const x of Object.values(v)) deepFreeze(x);
  }
  return v;
}

export const readEnv = (a: Annotations) => readAnnotation(a, ENV_KEY, validateEnvAnnotation) as Record<string, EnvVar[]> | undefined;
export const readEnvFrom = (a: Annotations) =>
  readAnnotation(a, ENV_FROM_KEY, validateEnvFromAnnotation) as Record<string, EnvFromSource[]> | undefined;
export const readServiceLinks = (a: Annotations) =>
  readAnnotation(a, SERVICE_LINKS_KEY, validateServiceLinksAnnotation) as Record<string, boolean> | undefined;

/**
 * The entry for `container`; the `*` entry only where the annotation allows one (`allowStar`).
 * Without a container name (plain bundle, no --container) a non-empty annotation without a
 * usable `*` entry is an error rather than silently ignored: the request would be lost. Under
 * Podman and the runtime shim only an annotation can name the container (Podman puts no name of
 * its own into the spec), so the message names the one envhook reads for CRI-O.
 */
export function entryFor<T>(
  value: Record<string, T> | undefined,
  key: string,
  container: string | undefined,
  allowStar: boolean,
): T | undefined {
  if (value === undefined) return undefined;
  if (container !== undefined && Object.hasOwn(value, container)) return value[container];
  if (allowStar && Object.hasOwn(value, '*')) return value['*'];
  if (container === undefined && Object.keys(value).length > 0) {
    throw new EnvhookError(
      `annotation ${JSON.stringify(key)}: the container has no name (no Kubernetes annotations in config.json): add the annotation io.kubernetes.container.name=NAME or use envhook inject --container NAME`,
    );
  }
  return undefined;
}
