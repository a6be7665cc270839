// The NRI CreateContainer handler (docs/design.md#nri-mode): the one pipeline with NRI's facts and the NRI
// applier, its owned copies made by the worker's sliced copier and awaited (the loop answers
// other requests between its slices). A sandbox, or a pod with no envhook.io/ annotation, gets the empty adjustment before
// anything else runs: no file I/O. A failure throws EnvhookError; the protocol layer returns
// its one-line message, so CreateContainer fails with it.
import { describeError, EnvhookError } from '../../errors.ts';
import { isSandbox } from '../../k8s/identity.ts';
import { APPLIED_KEY, ENVHOOK_PREFIX } from '../../k8s/annotation-keys.ts';
import type { Logger } from '../../log.ts';
import type { Settings } from '../../settings.ts';
import { factsFromNri } from '../../facts/nri-facts.ts';
import { runAsync } from '../../pipeline.ts';
import { inlineCopier, type Copier } from '../../mirror/copier.ts';
import { toNriAdjustment } from '../../apply/nri-adjustment.ts';
import type { NriCreateRequest } from '../../facts/nri-facts.ts';
import { EMPTY_ADJUSTMENT, type NriAdjustment } from '../../apply/nri-adjustment.ts';
import type { Claims } from './claims.ts';
import { ANSWERED_ELSEWHERE, GUARD_HANDLER, type NriCallContext, type NriCreateHandler } from './types.ts';

export interface NriHandlerOptions {
  settings: Pick<Settings, 'kubeletRoot'>;
  log: Logger;
  /** See apply/nri-adjustment.ts: false until a runtime is proven to apply removals. */
  removeEnv?: boolean | undefined;
  /**
   * Where the owned copies live (`<runDir>/volumes/`): a mounted volume with owners is read
   * through a copy the worker keeps in step (docs/ownership.md). Undefined: chowned in place.
   */
  runDir?: string | undefined;
  /** During a hand-over, the container is answered by whichever envhook nri claims it first (claims.ts). */
  claims?: Claims | undefined;
  /** Who makes the copies: the worker's sliced copier (mirror/copier.ts); default: in one go. */
  copier?: Copier | undefined;
}

export function createNriHandler({
  settings,
  log,
  removeEnv,
  runDir,
  claims,
  copier = inlineCopier(),
}: NriHandlerOptions): NriCreateHandler {
  // NRI's Mount has no ID mappings: an idmapped mount keeps the chown in place (ownership/copy-plan.ts).
  const copies = runDir === undefined ? undefined : { runDir, keepsIdMappings: false };
  return async (request: NriCreateRequest, context?: NriCallContext): Promise<NriAdjustment> => {
    if (isSandbox(request.container.annotations) || !asksEnvhook(request.pod.annotations)) return EMPTY_ADJUSTMENT;
    const where = {
      pod: request.pod.name,
      namespace: request.pod.namespace,
      podUid: request.pod.uid,
      container: request.container.name,
      id: request.container.id,
    };
    if (claims && !claims.claim(request.container.id)) {
      log.info(where, 'nri: answered by the other envhook nri (hand-over)');
      return ANSWERED_ELSEWHERE;
    }
    try {
      const guarded = request.pod.runtimeHandler === GUARD_HANDLER;
      const options = { settings, stage: 'nri' as const, log, deadline: context?.deadline, copies };
      const { output, plan } = await runAsync(factsFromNri(request), options, copier, (changes) =>
        toNriAdjustment(changes, { removeEnv, guarded }),
      );
      if (guarded && output.annotations[APPLIED_KEY] === undefined && plan.removed.length > 0) {
        log.info({ ...where, removed: plan.removed }, `nri: left to the ${GUARD_HANDLER} runtime handler (service-link removal)`);
        return output;
      }
      const copied = output.mounts?.map((m) => m.destination) ?? [];
      // a container the pod's annotation names with nothing to do (an init container's `[]`): only marked
      if (plan.env.length + plan.removed.length + plan.owners.length + copied.length === 0) {
        MARKED_ONLY.add(output);
        return output;
      }
      log.info({ ...where, env: plan.env.map((e) => e.name), removed: plan.removed, owners: plan.owners.length, copied }, 'nri: adjusted');
      return output;
    } catch (err) {
      // A refusal is the pod's problem (warn); anything else is envhook's (error). Logged here only.
      if (err instanceof EnvhookError) log.warn({ ...where, reason: describeError(err) }, 'nri: CreateContainer refused');
      else log.error({ ...where, err }, 'nri: CreateContainer failed');
      throw err;
    }
  };
}

/** Answers that carry only envhook's applied mark: nothing was applied (counted `empty`, not `adjusted`). */
const MARKED_ONLY = new WeakSet<NriAdjustment>();

/** True when the handler applied nothing to the container: the empty adjustment, or its applied mark alone. */
export function appliedNothing(adjustment: NriAdjustment): boolean {
  return adjustment === EMPTY_ADJUSTMENT || MARKED_ONLY.has(adjustment);
}

/** True when any pod annotation key is envhook's: keys only, never a value. */
function asksEnvhook(annotations: Readonly<Record<string, string>>): boolean {
  for (const key in annotations) if (key.startsWith(ENVHOOK_PREFIX)) return true;
  return false;
}
