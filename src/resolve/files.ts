// Env files read for one container start: each (volume, path) is read and parsed once, so a
// file named by several references yields the same variables to all of them. The volume is an
// emptyDir, an atomic-writer volume or a CSI volume (SPEC §10); every read goes through the
// confined reader (no symlink but the atomic writer's `..data`, regular file, non-blocking,
// bounded). Errors name the volume, the path, the key and the line — never a byte of the file.
import { EnvhookError, EnvFileError } from '../errors.ts';
import { ConfinedError } from '../fs/confined.ts';
import { readVolumeFile } from '../fs/volume-file.ts';
import { MAX_FILE_BYTES } from '../envfile/index.ts';
import { fileValue, FileValueError } from './file-value.ts';
import type { VolumeLocator } from '../k8s/volumes.ts';

export type ParseEnvFile = (bytes: Uint8Array) => Map<string, string>;

export interface FileRefLike { volumeName: string; path: string; optional?: boolean | undefined }

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

  #cached<T>(cache: Map<string, T | undefined>, ref: FileRefLike, decode: (bytes: Buffer) => T): T | undefined {
    const cacheKey = JSON.stringify([ref.volumeName, ref.path]);
    if (!cache.has(cacheKey)) {
      const bytes = this.#load(ref);
      try {
        cache.set(cacheKey, bytes && decode(bytes));
      } finally {
        bytes?.fill(0);
      }
    }
    const result = cache.get(cacheKey);
    if (result === undefined && !ref.optional) throw new EnvhookError(`${describeFile(ref)}: not found`);
    return result;
  }

  /** The file's bytes (the caller zeroes them), or undefined when it does not exist. */
  #load(ref: FileRefLike): Buffer | undefined {
    const volume = this.#volumes.envSource(ref.volumeName);
    try {
      return readVolumeFile(volume.dir, volume.viaData, ref.path, MAX_FILE_BYTES);
    } catch (err) {
      if (err instanceof ConfinedError && err.notFound) return undefined;
      if (err instanceof ConfinedError) throw new EnvhookError(`${describeFile(ref)}: ${err.reason}`, { cause: err });
      throw new EnvhookError(`${describeFile(ref)}: cannot read (${(err as NodeJS.ErrnoException).code ?? 'error'})`, { cause: err });
    }
  }
}
