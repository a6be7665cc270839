// The hook stage's check (SPEC §6): env asked for this container by annotations but not
// applied before the runtime's create means a hook-only registration; the container would
// start without its variables, so the start fails instead, saying what is missing.
import { EnvhookError } from '../errors.ts';
import { ENV_KEYS } from '../k8s/annotations.ts';
import { APPLIED_KEY, appliedDigest, envRequested } from './step.ts';
import type { Step } from '../pipeline.ts';

const NEEDED =
  'the runtime shim (hooks/envhook-runtime in place of runc) or the precreate hook (Podman) is needed; ' +
  'the createRuntime hook alone cannot set variables';

export const appliedCheckStep: Step = (spec, ctx) => {
  if (!envRequested(ctx)) return spec;
  const applied = ctx.annotations[APPLIED_KEY];
  if (applied === appliedDigest(ctx)) return spec;
  const keys = ENV_KEYS.filter((k) => ctx.annotations[k] !== undefined);
  const by = `${keys.length > 1 ? 'annotations' : 'annotation'} ${keys.map((k) => `"${k}"`).join(', ')}`;
  // A mark for other annotations: forged by the pod author, or the annotations changed after the shim ran.
  const why = applied === undefined ? '' : ` ("${APPLIED_KEY}" belongs to other annotations)`;
  throw new EnvhookError(`env requested by ${by} was not applied before the runtime's create${why}: ${NEEDED}`);
};
