// The flush: the pipeline's new spec leaves envhook here, and only here, after everything else
// succeeded. inject and the shim's create write config.json atomically (flushSpec); the create
// also renews the bundle's exec sidecar (exec-sidecar.ts); precreate prints the spec for Podman.
// The hook has nothing to flush (the runtime already read config.json), and NRI answers the
// runtime with its adjustment (nri/worker/handler.ts).
import fs from 'node:fs';
import path from 'node:path';
import { EnvhookError, errnoReason } from '../errors.ts';
import type { Logger } from '../log.ts';
import type { JsonObject } from '../oci/json.ts';
import { flushSpec, layoutOf, serializeSpec, type LoadedSpec, type Spec } from '../oci/spec.ts';
import { readAppliedEnv } from '../plan/mark.ts';
import { EXEC_SIDECAR, writeExecSidecar } from './exec-sidecar.ts';

/** For the shim's create: the container's id, and where a failed sidecar is logged. */
export interface SidecarOptions {
  id: string | undefined;
  log: Logger;
  /** Which container, for the log line. */
  about: Record<string, unknown>;
}

/**
 * Writes the new spec to the bundle's config.json (nothing when it is unchanged); with
 * `sidecar`, a sidecar of an earlier create is removed first and a new one written after.
 */
export function flushBundle(loaded: LoadedSpec, spec: Spec, sidecar?: SidecarOptions): void {
  const bundle = path.dirname(loaded.path);
  if (sidecar) removeSidecar(bundle);
  // A sandbox or a container that asks for nothing leaves config.json as it was (flushSpec).
  flushSpec(loaded, spec);
  if (sidecar) writeSidecar(bundle, loaded, spec, sidecar);
}

/** precreate's output: the new spec laid out like the input, or the input byte for byte when nothing changed. */
export function specOutput(text: string, before: Spec, after: Spec): string {
  return after === before ? text : serializeSpec(layoutOf(text), after);
}

/**
 * A sidecar of an earlier create of this bundle must not outlive its config.json (a create that
 * changes nothing leaves config.json's time as it was, so the front's age check would not do).
 */
function removeSidecar(bundle: string): void {
  const file = path.join(bundle, EXEC_SIDECAR);
  try {
    fs.rmSync(file, { force: true });
  } catch (cause) {
    throw new EnvhookError(`cannot remove ${file}: ${errnoReason(cause)}`, { cause });
  }
}

/**
 * The exec sidecar of a create whose env envhook changed. Only a speed-up: without it every
 * exec into the container takes the Node path, so a failure is logged, not fatal (config.json
 * is already written).
 */
function writeSidecar(bundle: string, loaded: LoadedSpec, after: Spec, { id, log, about }: SidecarOptions): void {
  const before = loaded.spec;
  if (after === before || id === undefined) return;
  try {
    const mark = readAppliedEnv(after.annotations as Record<string, unknown> | undefined, bundle);
    if (mark === undefined) return;
    const env = (spec: Spec) => ((spec.process as JsonObject | undefined)?.env ?? []) as string[];
    if (
      !writeExecSidecar({ bundle, id, original: loaded.original, originalEnv: env(before), finalEnv: env(after), mark, where: loaded.path })
    )
      log.debug(about, 'exec sidecar: no process env array in config.json; execs take the Node path');
  } catch (err) {
    log.warn({ err, ...about }, 'exec sidecar not written; execs take the Node path');
  }
}
