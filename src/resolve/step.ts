// The env step of the pipeline (SPEC §1, §2). Stages inject, create and precreate resolve the
// container's env and, when any env annotation has an entry for this container, mark the spec
// with envhook.io/applied. The hook stage does not run this step (pipeline.ts): it runs after
// the runtime has read config.json, too late to change the process env; it only checks, with
// envRequested() and appliedDigest() (resolve/applied.ts), that an earlier stage did the work.
import type { PipelineContext, Step } from '../pipeline.ts';
import { entryFor, ENV_FROM_KEY, ENV_KEY, ENV_KEYS, readEnv, readEnvFrom, readServiceLinks, SERVICE_LINKS_KEY } from '../k8s/annotations.ts';
import { setProcessEnv } from '../modify/env.ts';
import { setAnnotation } from '../modify/annotation.ts';
import { markAppliedEnv } from '../modify/applied-env.ts';
import { parseEnvFile } from '../envfile/index.ts';
import { resolveEnv, type EnvRequest } from './env.ts';
import { sha256Hex } from './sha256.ts';

export const APPLIED_KEY = 'envhook.io/applied';

/** This container's entries of the three env annotations (validated); undefined if it has none. */
export function envRequest(ctx: Pick<PipelineContext, 'annotations' | 'container'>): EnvRequest | undefined {
  const { annotations, container } = ctx;
  const env = entryFor(readEnv(annotations), ENV_KEY, container, false);
  const envFrom = entryFor(readEnvFrom(annotations), ENV_FROM_KEY, container, false);
  const links = entryFor(readServiceLinks(annotations), SERVICE_LINKS_KEY, container, true);
  if (env === undefined && envFrom === undefined && links === undefined) return undefined;
  return { env: env ?? [], envFrom: envFrom ?? [], removeServiceLinks: links === false };
}

/**
 * True when an env annotation has an entry for this container (an empty list or
 * serviceLinks: true count too): the runtime shim or precreate stage must then have run, and
 * left APPLIED_KEY = appliedDigest(ctx). Throws EnvhookError on an invalid annotation.
 */
export function envRequested(ctx: Pick<PipelineContext, 'annotations' | 'container'>): boolean {
  return envRequest(ctx) !== undefined;
}

/**
 * The value of APPLIED_KEY: a digest of the container name and the three annotations' raw text,
 * so the hook can tell that the applied mark belongs to these very annotations. It is a
 * consistency check against a misconfigured node, not a security boundary: the pod author
 * who could forge it could as well leave the annotations out.
 */
export function appliedDigest(ctx: Pick<PipelineContext, 'annotations' | 'container'>): string {
  const input = JSON.stringify([ctx.container ?? null, ...ENV_KEYS.map((k) => ctx.annotations[k] ?? null)]);
  return 'sha256:' + sha256Hex(input).slice(0, 32);
}

export const envStep: Step = (spec, ctx) => {
  const req = envRequest(ctx);
  if (req === undefined) return spec;
  const { log } = ctx;
  const processEnv = ((spec.process as { env?: string[] } | undefined)?.env ?? []) as string[];
  log.debug({ container: ctx.container, envFrom: req.envFrom.length, env: req.env.length, removeServiceLinks: req.removeServiceLinks }, 'env requested');
  const resolved = resolveEnv(processEnv, req, ctx.volumes, parseEnvFile);
  for (const v of resolved.set) log.debug({ name: v.name, source: v.source }, 'env set');
  for (const name of resolved.removed) log.debug({ name }, 'service variable removed');
  for (const v of resolved.skipped) log.debug({ name: v.name, source: v.source }, 'optional env source missing: not set');
  ctx.plan.env.push(...resolved.set);
  ctx.plan.removed.push(...resolved.removed);
  (ctx.plan.skipped ??= []).push(...resolved.skipped);
  log.info({ container: ctx.container, set: resolved.set.length, removed: resolved.removed.length, skipped: resolved.skipped.length }, 'env resolved');
  const applied = setAnnotation(setProcessEnv(spec, resolved.env), APPLIED_KEY, appliedDigest(ctx));
  return markAppliedEnv(applied, { set: resolved.set.map((v) => v.name), removed: resolved.removed });
};
