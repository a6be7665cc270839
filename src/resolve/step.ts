// Placeholder until env resolution lands (issue 2): refuses rather than ignores a request.
import { EnvhookError } from '../errors.ts';
import type { Step } from '../pipeline.ts';

export const envStep: Step = (spec, ctx) => {
  for (const key of ['envhook.io/env', 'envhook.io/envFrom', 'envhook.io/serviceLinks']) {
    if (ctx.annotations[key] !== undefined) throw new EnvhookError(`annotation "${key}" is not supported yet by this build`);
  }
  return spec;
};
