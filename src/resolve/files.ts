// Env files read for one container start: each (volume, path) is read and parsed once, so a
// file named by several references yields the same variables to all of them. The volume is an
// emptyDir, an atomic-writer volume or a CSI volume (SPEC §10); every read goes through the
// confined reader (no symlink but the atomic writer's `..data`, regular file, non-blocking,
// bounded). Errors name the volume, the path, the key and the line — never a byte of the file.
import { EnvhookError, EnvFileError } from '../errors.ts';
import { ConfinedError } from '../fs/confined.ts';
import { readVolumeFile } from '../fs/volume-file.ts';
import { MAX_FILE_BYTES } from '../envfile/index.ts';
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
    const cacheKey = JSON.stringify([ref.volumeName, ref.path]);
    if (!this.#cache.has(cacheKey)) this.#cache.set(cacheKey, this.#load(ref));
    const vars = this.#cache.get(cacheKey);
    if (vars === undefined && !ref.optional) throw new EnvhookError(`${describeFile(ref)}: not found`);
    return vars;
  }

  #load(ref: FileRefLike): Map<string, string> | undefined {
    const volume = this.#volumes.envSource(ref.volumeName);
    let bytes: Buffer;
    try {
      bytes = readVolumeFile(volume.dir, volume.viaData, ref.path, MAX_FILE_BYTES);
    } catch (err) {
      if (err instanceof ConfinedError && err.notFound) return undefined;
      if (err instanceof ConfinedError) throw new EnvhookError(`${describeFile(ref)}: ${err.reason}`, { cause: err });
      throw new EnvhookError(`${describeFile(ref)}: cannot read (${(err as NodeJS.ErrnoException).code ?? 'error'})`, { cause: err });
    }
    try {
      return this.#parse(bytes);
    } catch (err) {
      if (err instanceof EnvFileError) {
        throw new EnvhookError(`${describeFile(ref)}: ${err.line > 0 ? `line ${err.line}: ` : ''}${err.reason}`, { cause: err });
      }
      // A parser bug must not leak a foreign message: describeError shows only the name.
      throw err;
    } finally {
      bytes.fill(0);
    }
  }
}
