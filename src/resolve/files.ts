// Env files read for one container start: each (volume, path) is read and parsed once, so a
// file named by several references yields the same variables to all of them, and each volume
// directory is opened once and held until close(). The volume is an
// emptyDir, an atomic-writer volume or a CSI volume (docs/design.md#env-from-other-volumes); every read goes through the
// confined reader (no symlink but the atomic writer's `..data`, regular file, non-blocking,
// bounded). Errors name the volume, the path, the key and the line — never a byte of the file.
import { EnvFileError, EnvhookError, errnoReason } from '../errors.ts';
import { ConfinedError } from '../fs/confined.ts';
import type fs from 'node:fs';
import {
  closeVolume,
  EntryError,
  openVolume,
  readHeldVolumeFileUnless,
  readVolumeDir,
  type DirFiles,
  type OpenVolume,
} from '../fs/volume-file.ts';
import { rememberFile, unchangedFile, type Decoded } from './file-memo.ts';
import { MAX_FILE_BYTES } from '../envfile/envfile.ts';
import { fileValue, FileValueError } from './file-value.ts';
import type { VolumeLocator } from '../k8s/volumes.ts';
import type { VolumeRef } from '../k8s/annotations.ts';

export type ParseEnvFile = (bytes: Uint8Array) => Map<string, string>;

export interface FileRefLike {
  volumeName: string;
  path: string;
  optional?: boolean | undefined;
}

/** `volume "V": directory "P"` (`"."`: the volume's top), the prefix of every message about a volumeRef. */
export function describeDir(ref: VolumeRef): string {
  return `volume ${JSON.stringify(ref.volumeName)}: directory ${JSON.stringify(ref.path ?? '.')}`;
}

function entryPath(ref: VolumeRef, name: string): string {
  return ref.path === undefined ? name : `${ref.path.replace(/\/+$/, '')}/${name}`;
}

/** At most this many names in a volumeRef directory: a Secret of more keys is not a real one. */
const MAX_DIR_ENTRIES = 1024;
/** At most this many bytes of a volumeRef's files together: a Secret's or ConfigMap's limit. */
const MAX_DIR_BYTES = 1024 * 1024;

/** The relaxed Kubernetes rule (docs/design.md#annotations), on bytes: printable ASCII without `=`. */
function isVariableName(prefix: string, name: Buffer): boolean {
  if (prefix.length + name.length === 0) return false;
  for (const b of name) if (b < 0x20 || b > 0x7e || b === 0x3d) return false;
  return true;
}

/** `volume "V": file "P"`, the prefix of every message about one env file. */
export function describeFile(ref: FileRefLike): string {
  return `volume ${JSON.stringify(ref.volumeName)}: file ${JSON.stringify(ref.path)}`;
}

export class EnvFiles {
  readonly #volumes: VolumeLocator;
  readonly #parse: ParseEnvFile;
  /** undefined: the file does not exist (ENOENT), which only an optional reference may accept. */
  readonly #cache = new Map<string, Map<string, string> | undefined>();
  readonly #values = new Map<string, string | undefined>();
  /** The volumes opened so far, by name (close() releases them). */
  readonly #held = new Map<string, OpenVolume>();

  constructor(volumes: VolumeLocator, parse: ParseEnvFile) {
    this.#volumes = volumes;
    this.#parse = parse;
  }

  /**
   * The variables of the file, or undefined when it is missing and `ref.optional`.
   * `optional` never covers a volume that is not found (the pod is not what the annotation
   * says), a file that is not a regular file, nor a file that does not parse.
   */
  read(ref: FileRefLike): Map<string, string> | undefined {
    return this.#cached(this.#cache, ref, (bytes) => {
      try {
        return this.#parse(bytes);
      } catch (err) {
        if (err instanceof EnvFileError) {
          throw new EnvhookError(`${describeFile(ref)}: ${err.line > 0 ? `line ${err.line}: ` : ''}${err.reason}`, { cause: err });
        }
        // A parser bug must not leak a foreign message: describeError shows only the name.
        throw err;
      }
    });
  }

  /** The whole file as one value (file-value.ts), or undefined when it is missing and `ref.optional`. */
  value(ref: FileRefLike): string | undefined {
    return this.#cached(this.#values, ref, (bytes) => {
      try {
        return fileValue(bytes);
      } catch (err) {
        if (err instanceof FileValueError) throw new EnvhookError(`${describeFile(ref)}: ${err.message}`);
        throw err;
      }
    });
  }

  /**
   * Every regular file of the directory as one variable named `prefix` + its name, its value as
   * a fileRef's (file-value.ts); undefined when the directory is missing and `ref.optional`.
   * A name that is not a variable name with the prefix is skipped, as the kubelet skips a
   * Secret's or ConfigMap's invalid keys in envFrom, and listed in `invalid`.
   */
  dir(ref: VolumeRef, prefix: string): { vars: Map<string, string>; invalid: string[] } | undefined {
    const volume = this.#volumes.envSource(ref.volumeName);
    let listed: DirFiles;
    try {
      listed = readVolumeDir(volume.dir, volume.viaData, ref.path, {
        limit: MAX_FILE_BYTES,
        totalLimit: MAX_DIR_BYTES,
        maxEntries: MAX_DIR_ENTRIES,
        wanted: (name) => isVariableName(prefix, name),
      });
    } catch (err) {
      if (err instanceof EntryError)
        throw new EnvhookError(`${describeFile({ ...ref, path: entryPath(ref, err.entry) })}: ${err.reason}`, { cause: err });
      if (err instanceof ConfinedError && err.notFound) {
        if (ref.optional) return undefined;
        throw new EnvhookError(`${describeDir(ref)}: not found`, { cause: err });
      }
      if (err instanceof ConfinedError) throw new EnvhookError(`${describeDir(ref)}: ${err.reason}`, { cause: err });
      throw new EnvhookError(`${describeDir(ref)}: cannot read: ${errnoReason(err)}`, { cause: err });
    }
    const vars = new Map<string, string>();
    try {
      for (const f of listed.files) {
        try {
          vars.set(prefix + f.name, fileValue(f.bytes));
        } catch (err) {
          if (err instanceof FileValueError)
            throw new EnvhookError(`${describeFile({ ...ref, path: entryPath(ref, f.name) })}: ${err.message}`);
          throw err;
        }
      }
    } finally {
      for (const f of listed.files) f.bytes.fill(0);
    }
    return { vars, invalid: listed.skipped.map((name) => prefix + name) };
  }

  /** Releases the volume directories the reads held open. */
  close(): void {
    for (const v of this.#held.values()) closeVolume(v);
    this.#held.clear();
  }

  #cached<T>(cache: Map<string, T | undefined>, ref: FileRefLike, decode: (bytes: Buffer) => T): T | undefined {
    const cacheKey = JSON.stringify([ref.volumeName, ref.path]);
    if (!cache.has(cacheKey)) {
      const kind = cache === this.#cache ? 'env' : 'value';
      let same: Decoded | undefined;
      const bytes = this.#load(ref, (st) => (same = unchangedFile(kind, st)) !== undefined);
      if (same !== undefined) cache.set(cacheKey, same.decoded as T);
      else
        try {
          const decoded = bytes && decode(bytes);
          cache.set(cacheKey, decoded);
          if (bytes && decoded !== undefined) rememberFile(kind, this.#stat!, bytes.length, decoded);
        } finally {
          bytes?.fill(0);
        }
    }
    const result = cache.get(cacheKey);
    if (result === undefined && !ref.optional) throw new EnvhookError(`${describeFile(ref)}: not found`);
    return result;
  }

  /** The fstat of the file #load read last. */
  #stat: fs.Stats | undefined;

  /**
   * The file's bytes (the caller zeroes them), or undefined when it does not exist or when
   * `known` says the file, reached and checked, is one decoded before and unchanged.
   */
  #load(ref: FileRefLike, known: (st: fs.Stats) => boolean = () => false): Buffer | undefined {
    const volume = this.#volumes.envSource(ref.volumeName);
    this.#stat = undefined;
    const held = (): OpenVolume => {
      let v = this.#held.get(ref.volumeName);
      if (v === undefined) this.#held.set(ref.volumeName, (v = openVolume(volume.dir, volume.viaData)));
      return v;
    };
    try {
      return readHeldVolumeFileUnless(held, ref.path, MAX_FILE_BYTES, (st) => {
        this.#stat = st;
        return known(st);
      });
    } catch (err) {
      if (err instanceof ConfinedError && err.notFound) return undefined;
      if (err instanceof ConfinedError) throw new EnvhookError(`${describeFile(ref)}: ${err.reason}`, { cause: err });
      throw new EnvhookError(`${describeFile(ref)}: cannot read: ${errnoReason(err)}`, { cause: err });
    }
  }
}
