// `exec` through the runtime front. containerd and CRI-O build an exec process (kubectl exec,
// exec probes, lifecycle handlers) from their own stored spec, which never saw envhook's
// rewrite of config.json, and pass it as `runc exec --process FILE`. When the container's
// config.json carries the names mark, FILE gets the same env changes as PID 1 and nothing else;
// the front then execs the real runtime with the same argv. Without --process runc builds the
// process from config.json itself, which already has the env: nothing to do.
import fs from 'node:fs';
import path from 'node:path';
import { EnvhookError, errnoReason } from '../errors.ts';
import type { Logger } from '../log.ts';
import { atomicWrite } from '../fs/atomic-write.ts';
import { parseLossless, type JsonObject } from '../oci/json.ts';
import { layoutOf, loadSpec, serializeSpec } from '../oci/spec.ts';
import type { RuncArgs } from '../oci/runc-args.ts';
import { parseExecArgs } from '../oci/runc-exec-args.ts';
import { bundleFromStateOutput } from '../oci/state.ts';
import { containerName, podUidAnnotation, type Annotations } from '../k8s/identity.ts';
import { execEnv } from '../apply/exec-env.ts';
import { readAppliedEnv } from '../plan/mark.ts';

/** A process file is a few KiB; containerd's largest hold a container's whole env. */
const PROCESS_LIMIT = 16 * 1024 * 1024;

export interface ExecContext {
  argv: readonly string[];
  runc: RuncArgs;
  runtime: string;
  env: NodeJS.ProcessEnv;
  cwd: string;
  log: Logger;
  /** Filled in as it is learnt, for the log line of a failure: id, bundle, container, pod. */
  about: Record<string, unknown>;
}

export function prepareExec(ctx: ExecContext): void {
  const { process: file, id } = parseExecArgs(ctx.argv.slice(ctx.runc.subcommandIndex + 1));
  if (file === undefined || id === undefined) return;
  ctx.about.id = id;
  // The front passes the bundle it read from the runtime's state; else ask the runtime.
  const bundle = ctx.env.ENVHOOK_EXEC_BUNDLE || bundleOf(ctx, id);
  ctx.about.bundle = bundle;
  const loaded = loadSpec(bundle);
  const annotations = (loaded.spec.annotations ?? {}) as Annotations;
  ctx.about.container = containerName(annotations);
  ctx.about.pod = podUidAnnotation(annotations);
  const mark = readAppliedEnv(annotations, loaded.path);
  if (mark === undefined) return;

  const processFile = realFile(path.resolve(ctx.cwd, file));
  ctx.about.process = processFile;
  const text = readProcessFile(processFile);
  const proc = parseLossless(text, processFile);
  if (proc === null || typeof proc !== 'object' || Array.isArray(proc) || JSON.isRawJSON(proc))
    throw new EnvhookError(`${processFile}: not a JSON object`);
  const env = stringList((proc as JsonObject).env, `${processFile}: "env"`);
  const specEnv = stringList((loaded.spec.process as JsonObject | undefined)?.env, `${loaded.path}: "process.env"`);
  const next = execEnv(env, mark, specEnv, loaded.path);
  if (next.length === env.length && next.every((e, i) => e === env[i])) return;
  // Same path, renamed over: the caller owns the file and removes it after the exec, and this
  // process becomes the runtime, so a copy of ours could never be cleaned up.
  atomicWrite(processFile, serializeSpec(layoutOf(text), { ...(proc as JsonObject), env: next }));
  ctx.log.info({ ...ctx.about, set: mark.set.length, removed: mark.removed.length }, 'exec: env applied; runtime next');
}

/** The bundle as the runtime knows it: `RUNTIME <global options> state ID` → `bundle` (read by src/oci/state.ts). */
function bundleOf(ctx: ExecContext, id: string): string {
  const globals = ctx.argv.slice(0, ctx.runc.subcommandIndex);
  const command = `${ctx.runtime} state ${JSON.stringify(id)}`;
  let out: string;
  try {
    // Loaded here: node:child_process (with net, dgram and the stream stack) would add to
    // the start-up of every create through the front, and only an exec the front could not
    // serve uses it.
    out = process.getBuiltinModule('node:child_process').execFileSync(ctx.runtime, [...globals, 'state', id], {
      encoding: 'utf8',
      env: ctx.env,
      stdio: ['ignore', 'pipe', 'ignore'],
      maxBuffer: 16 * 1024 * 1024,
    });
  } catch (cause) {
    const status = (cause as { status?: number | null }).status;
    throw new EnvhookError(`${command} failed${status ? ` (exit status ${status})` : ''}: cannot find the container's bundle`, { cause });
  }
  return bundleFromStateOutput(out, command);
}

/** The process file with symlinks resolved, so the rename replaces the file and not a link. */
function realFile(file: string): string {
  try {
    return fs.realpathSync(file);
  } catch (cause) {
    throw new EnvhookError(`cannot read process file ${file}: ${errnoReason(cause)}`, { cause });
  }
}

function readProcessFile(file: string): string {
  try {
    const st = fs.statSync(file);
    if (!st.isFile()) throw new EnvhookError(`process file ${file}: not a regular file`);
    if (st.size > PROCESS_LIMIT) throw new EnvhookError(`process file ${file}: larger than ${PROCESS_LIMIT} bytes`);
    return fs.readFileSync(file, 'utf8');
  } catch (cause) {
    if (cause instanceof EnvhookError) throw cause;
    throw new EnvhookError(`cannot read process file ${file}: ${errnoReason(cause)}`, { cause });
  }
}

function stringList(value: unknown, what: string): string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) throw new EnvhookError(`${what} is not a list of strings`);
  return value;
}
