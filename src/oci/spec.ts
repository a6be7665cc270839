// Load and flush a bundle's config.json. Load keeps the original bytes (so every failure
// path can leave the file exactly as it was: we simply never write); flush replaces the
// file atomically: temp file in the bundle, fsync, rename, fsync the directory.
import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
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
  /** Whether the original ended with a newline; absent: as the indent suggests. */
  finalNewline?: boolean;
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
  return { path: file, original, spec: parseSpec(original, file), indent: detectIndent(original), finalNewline: original.endsWith('\n') };
}

/**
 * Serialise as the original was laid out (compact, or indented like it; final newline or not),
 * so that an unchanged spec serialises to the original bytes and is not rewritten.
 */
export function serializeSpec(loaded: Pick<LoadedSpec, 'indent' | 'finalNewline'>, spec: JsonValue): string {
  return stringifyLossless(spec, loaded.indent) + ((loaded.finalNewline ?? Boolean(loaded.indent)) ? '\n' : '');
}

export function flushSpec(loaded: LoadedSpec, spec: Spec): void {
  const text = serializeSpec(loaded, spec);
  if (text === loaded.original) return;
  // Same content in another layout (spaces after colons, CRLF): a no-op must not write either.
  if (stringifyLossless(spec) === stringifyLossless(parseLossless(loaded.original, loaded.path))) return;
  atomicWrite(loaded.path, text);
}

/** The points of atomicWrite where a crash leaves a different state on disk. */
export type WriteStep = 'opened' | 'written' | 'synced' | 'renamed' | 'dir-synced';

// Test-only fault switch (test/security/crash.test.ts kills the process at each step). It is a
// module variable set by a function call only: no environment variable, flag, config key or
// annotation reaches it, so it stays inert in production.
let faultAt: ((step: WriteStep) => void) | undefined;
export function setWriteFault(fn: ((step: WriteStep) => void) | undefined): void {
  faultAt = fn;
}

export function atomicWrite(file: string, text: string): void {
  const dir = path.dirname(file);
  const tmp = path.join(dir, `.${path.basename(file)}.envhook-${process.pid}-${crypto.randomBytes(6).toString('hex')}`);
  let fd: number | undefined;
  try {
    const st = fs.statSync(file, { throwIfNoEntry: false });
    fd = fs.openSync(tmp, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW, st ? st.mode & 0o7777 : 0o644);
    faultAt?.('opened');
    fs.writeFileSync(fd, text);
    faultAt?.('written');
    if (st) {
      fs.fchmodSync(fd, st.mode & 0o7777);
      if (process.getuid?.() === 0) fs.fchownSync(fd, st.uid, st.gid);
    }
    fs.fsyncSync(fd);
    faultAt?.('synced');
    fs.closeSync(fd);
    fd = undefined;
    fs.renameSync(tmp, file);
    faultAt?.('renamed');
  } catch (cause) {
    if (fd !== undefined) fs.closeSync(fd);
    fs.rmSync(tmp, { force: true });
    throw new EnvhookError(`cannot write ${file}: ${(cause as NodeJS.ErrnoException).code ?? 'error'}`, { cause });
  }
  fsyncDir(dir);
  faultAt?.('dir-synced');
}

function fsyncDir(dir: string): void {
  try {
    const fd = fs.openSync(dir, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY);
    try {
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
  } catch (cause) {
    throw new EnvhookError(`cannot sync directory ${dir}: ${(cause as NodeJS.ErrnoException).code ?? 'error'}`, { cause });
  }
}

export function detectIndent(text: string): string | undefined {
  const m = /^[{[]\r?\n([ \t]+)\S/.exec(text);
  return m ? m[1] : undefined;
}
