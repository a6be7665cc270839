// The hook stage's check (SPEC §6): env asked for by annotations but not applied before the
// runtime's create means a hook-only registration; the container would start without its
// variables, so the start fails instead, saying what is missing.
import { EnvhookError } from '../errors.ts';
import { APPLIED_ANNOTATION } from '../modify/applied.ts';
import type { Step } from '../pipeline.ts';

const ENV_ANNOTATIONS = ['envhook.io/env', 'envhook.io/envFrom', 'envhook.io/serviceLinks'];

export const appliedCheckStep: Step = (spec, ctx) => {
  if (ctx.annotations[APPLIED_ANNOTATION] !== undefined) return spec;
  const requested = ENV_ANNOTATIONS.find((key) => ctx.annotations[key] !== undefined);
  if (requested === undefined) return spec;
  throw new EnvhookError(
    `annotation "${requested}" asks for env, but it was not applied before the runtime's create: ` +
      'register envhook as the runtime shim (hooks/envhook-runtime in place of runc) or as the precreate hook (Podman); ' +
      'the createRuntime hook alone cannot set variables',
  );
};
