// Placeholder until ownership lands (issue 4): refuses rather than ignores a request.
import { EnvhookError } from '../errors.ts';
import type { Step } from '../pipeline.ts';

export const ownershipStep: Step = (spec, ctx) => {
  if (ctx.annotations['envhook.io/volumeOwners'] !== undefined) throw new EnvhookError('annotation "envhook.io/volumeOwners" is not supported yet by this build');
  return spec;
};
