// Load and flush a bundle's config.json. Load keeps the original bytes (so every failure
// path can leave the file exactly as it was: we simply never write); flush replaces the
// file atomically: temp file in the bundle, fsync, rename, fsync the directory.
import fs from 'node:fs';
import path from 'node:path';
import { EnvhookError, errnoReason } from '../errors.ts';
import { atomicWrite } from '../fs/atomic-write.ts';
import { parseLossless, stringifyLossless, type JsonObject, type JsonValue } from './json.ts';
import { validateSpec } from '../schema.ts';

/** The fields envhook reads; every other field is carried through untouched. */
export type Spec = JsonObject;

/** How a config.json was laid out, so that it is written back the same way. */
export interface Layout {
  indent: string | undefined;
  finalNewline: boolean;
}

export interface LoadedSpec extends Layout {
  path: string;
  original: string;
  spec: Spec;
}

export const SPEC_LIMIT = 64 * 1024 * 1024;

export function parseSpec(text: string, where: string): Spec {
  const spec = parseLossless(text, where);
  if (spec === null || typeof spec !== 'object' || Array.isArray(spec) || JSON.isRawJSON(spec)) {
    throw new EnvhookError(`${where}: not a JSON object`);
  }
  validateSpec(spec, where);
  return spec as Spec;
}

export function loadSpec(bundle: string): LoadedSpec {
  const file = path.join(bundle, 'config.json');
  let original: string;
  try {
    const st = fs.statSync(file);
    if (!st.isFile()) throw new EnvhookError(`${file}: not a regular file`);
    if (st.size > SPEC_LIMIT) throw new EnvhookError(`${file}: larger than ${SPEC_LIMIT} bytes`);
    original = fs.readFileSync(file, 'utf8');
  } catch (cause) {
    if (cause instanceof EnvhookError) throw cause;
    throw new EnvhookError(`cannot read ${file}: ${errnoReason(cause)}`, { cause });
  }
  return { path: file, original, spec: parseSpec(original, file), ...layoutOf(original) };
}

export function layoutOf(text: string): Layout {
  const m = /^[{[]\r?\n([ \t]+)\S/.exec(text);
  return { indent: m ? m[1] : undefined, finalNewline: text.endsWith('\n') };
}

/**
 * Serialise as the original was laid out (compact, or indented like it; final newline or not),
 * so that an unchanged spec serialises to the original bytes and is not rewritten.
 */
export function serializeSpec(layout: Layout, spec: JsonValue): string {
  return stringifyLossless(spec, layout.indent) + (layout.finalNewline ? '\n' : '');
}

export function flushSpec(loaded: LoadedSpec, spec: Spec): void {
  // The steps return the spec they were given when they change nothing: a no-op start never
  // writes, whatever the original's layout (spaces after colons, CRLF), at no extra parse.
  if (spec === loaded.spec) return;
  const text = serializeSpec(loaded, spec);
  if (text === loaded.original) return;
  atomicWrite(loaded.path, text);
}
