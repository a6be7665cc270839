// Load and flush a bundle's config.json. Load keeps the original bytes (so every failure
// path can leave the file exactly as it was: we simply never write); flush replaces the
// file atomically: temp file in the bundle, fsync, rename, fsync the directory.
import fs from 'node:fs';
import path from 'node:path';
import { EnvhookError } from '../errors.ts';
import { parseLossless, stringifyLossless, type JsonObject, type JsonValue } from './json.ts';
import { validateSpec } from '../schema.ts';

/** The fields envhook reads; every other field is carried through untouched. */
export interface Spec extends JsonObject {}

export interface LoadedSpec {
  path: string;
  original: string;
  spec: Spec;
  indent: string | undefined;
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
    throw new EnvhookError(`cannot read ${file}: ${(cause as NodeJS.ErrnoException).code ?? 'error'}`, { cause });
  }
  return { path: file, original, spec: parseSpec(original, file), indent: detectIndent(original) };
}

/** Serialise as the original was laid out (compact, or indented like it). */
export function serializeSpec(loaded: Pick<LoadedSpec, 'indent'>, spec: JsonValue): string {
  return stringifyLossless(spec, loaded.indent) + (loaded.indent ? '\n' : '');
}

export function flushSpec(loaded: LoadedSpec, spec: Spec): void {
  const text = serializeSpec(loaded, spec);
  if (text === loaded.original) return;
  atomicWrite(loaded.path, text);
}

export function atomicWrite(file: string, text: string): void {
  const dir = path.dirname(file);
  // Unique among live processes by pid and clock; O_EXCL refuses any file already there. (No
  // node:crypto for a random suffix: loading it costs ~4 ms of every container start.)
  const tmp = path.join(dir, `.${path.basename(file)}.envhook-${process.pid}-${process.hrtime.bigint().toString(36)}`);
  let fd: number | undefined;
  try {
    const st = fs.statSync(file, { throwIfNoEntry: false });
    fd = fs.openSync(tmp, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW, st ? st.mode & 0o7777 : 0o644);
    fs.writeFileSync(fd, text);
    if (st) {
      fs.fchmodSync(fd, st.mode & 0o7777);
      if (process.getuid?.() === 0) fs.fchownSync(fd, st.uid, st.gid);
    }
    fs.fsyncSync(fd);
    fs.closeSync(fd);
    fd = undefined;
    fs.renameSync(tmp, file);
  } catch (cause) {
    if (fd !== undefined) fs.closeSync(fd);
    fs.rmSync(tmp, { force: true });
    throw new EnvhookError(`cannot write ${file}: ${(cause as NodeJS.ErrnoException).code ?? 'error'}`, { cause });
  }
  fsyncDir(dir);
}

function fsyncDir(dir: string): void {
  const fd = fs.openSync(dir, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY);
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

export function detectIndent(text: string): string | undefined {
  const m = /^[{[]\r?\n([ \t]+)\S/.exec(text);
  return m ? m[1] : undefined;
}
