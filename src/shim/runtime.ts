// Which real runtime the shim becomes: the `runtime` setting as a path, or that name on PATH
// (default runc). Never an envhook front: not the front that called us (ENVHOOK_FRONT), not
// any file carrying the front's marker line, so a misconfiguration fails instead of looping.
import fs from 'node:fs';
import path from 'node:path';
import { EnvhookError } from '../errors.ts';

/** A line every envhook front carries (hooks/envhook-runtime). */
export const FRONT_MARKER = 'envhook-runtime-front:';

export function resolveRuntime(setting: string, env: NodeJS.ProcessEnv = process.env): string {
  const front = env.ENVHOOK_FRONT ? realpathOr(env.ENVHOOK_FRONT) : undefined;
  const isFront = (file: string) => realpathOr(file) === front || carriesMarker(file);
  if (setting.includes('/')) {
    if (!isExecutableFile(setting)) throw new EnvhookError(`runtime ${setting} is not an executable file`);
    if (isFront(setting))
      throw new EnvhookError(
        `runtime ${setting} is an envhook front, not a real runtime: name the real one (envhook install --oci-runtime, or ENVHOOK_RUNTIME)`,
      );
    return setting;
  }
  // PATH order, skipping fronts: an admin may have installed the front as `runc`.
  for (const dir of (env.PATH ?? '').split(':')) {
    const file = path.join(dir || '.', setting);
    if (isExecutableFile(file) && !isFront(file)) return file;
  }
  throw new EnvhookError(`runtime "${setting}" not found on PATH (other than an envhook front)`);
}

function isExecutableFile(file: string): boolean {
  try {
    if (!fs.statSync(file).isFile()) return false;
    fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function realpathOr(file: string): string {
  try {
    return fs.realpathSync(file);
  } catch {
    return path.resolve(file);
  }
}

/** Looks at the first 1 KiB only: a front is a short script, a real runtime a large binary. */
export function carriesMarker(file: string): boolean {
  let fd: number | undefined;
  try {
    fd = fs.openSync(file, 'r');
    const buf = Buffer.alloc(1024);
    const n = fs.readSync(fd, buf, 0, buf.length, 0);
    return buf.subarray(0, n).includes(FRONT_MARKER);
  } catch {
    return false;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}
