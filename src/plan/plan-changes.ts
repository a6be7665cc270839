// The plan: from the facts of one container to its changes, with no side effect but reads.
// In order: what the annotations ask (pure) → the env check of the hook stage → the pod
// directory, found only when a volume is needed → env resolved from files → owners checked.
// A failure anywhere leaves nothing to undo: nothing has been written or chowned yet.
import type { Logger } from '../log.ts';
import type { Facts } from '../facts/facts.ts';
import { findPodDir } from '../k8s/pod.ts';
import { createVolumeLocator, type VolumeLocator } from '../k8s/volumes.ts';
import { parseEnvFile } from '../envfile/envfile.ts';
import { resolveEnv, type EnvRequest, type ResolvedEnv } from '../resolve/env.ts';
import { prepareOwners } from '../ownership/prepare.ts';
import type { CopySettings } from '../ownership/copy-plan.ts';
import { envRequest, ownersRequest, podVolumes } from './request.ts';
import { appliedDigest, checkApplied, envAnnotated } from './mark.ts';
import type { Changes } from './changes.ts';

export interface PlanOptions {
  kubeletRoot: string;
  /**
   * 'resolve': the env is set by this entry point (inject, the shim's create, precreate, NRI).
   * 'verify': the runtime already read config.json (the hook stage): env can only be checked.
   */
  env: 'resolve' | 'verify';
  log: Logger;
  /** For log lines: which entry point runs. */
  stage: string;
  /** Owned copies (ownership/copy-plan.ts) where the entry point points mounts at them; undefined: chown in place. */
  copies?: Omit<CopySettings, 'podUid'> | undefined;
}

export function planChanges(facts: Facts, o: PlanOptions): Changes {
  const { container } = facts;
  if (facts.sandbox) {
    o.log.debug({ stage: o.stage }, 'sandbox container: passed through');
    return { container, sandbox: true, env: undefined, owners: [], mark: undefined };
  }
  const requested = envRequest(facts);
  if (o.env === 'verify') checkApplied(facts, requested !== undefined);
  const env = o.env === 'resolve' ? requested : undefined;
  const owners = ownersRequest(facts);
  const pod =
    podVolumes(env, owners, facts.volumes).length > 0 ? findPodDir(facts.pod, facts, facts.annotations, o.kubeletRoot) : undefined;
  const volumes = createVolumeLocator({ pod, overrides: facts.volumes });
  const resolved = env === undefined ? undefined : resolveLogged(facts, env, volumes, o.log, o.stage);
  return {
    container,
    sandbox: false,
    env: resolved,
    owners: prepareOwners(owners, volumes, facts, o.copies && { ...o.copies, podUid: pod?.from === 'flag' ? undefined : pod?.uid }),
    // Every container of a pod that asks for env gets the mark, even with no entry of its own (an
    // init container): the guard's front then sees it answered and execs the runtime at once.
    mark: resolved !== undefined || envAnnotated(facts) ? appliedDigest(facts) : undefined,
  };
}

function resolveLogged(facts: Facts, req: EnvRequest, volumes: VolumeLocator, log: Logger, stage: string): ResolvedEnv {
  log.debug(
    { container: facts.container, envFrom: req.envFrom.length, env: req.env.length, removeServiceLinks: req.removeServiceLinks },
    'env requested',
  );
  const resolved = resolveEnv(facts.env, req, volumes, parseEnvFile);
  // One line a variable at debug only: not even their fields are made otherwise (a hundred a start).
  if (log.isLevelEnabled('debug')) {
    for (const v of resolved.set) log.debug({ name: v.name, source: v.source }, 'env set');
    for (const name of resolved.removed) log.debug({ name }, 'service variable removed');
  }
  for (const v of resolved.skipped) {
    if (v.invalidName) log.warn({ name: v.name, source: v.source }, 'envFrom file name is not a variable name: not set');
    else log.debug({ name: v.name, source: v.source }, 'optional env source missing: not set');
  }
  // NRI's one line a start is `nri: adjusted` (nri/worker/handler.ts), which names what was set.
  (stage === 'nri' ? log.debug : log.info).call(
    log,
    { container: facts.container, set: resolved.set.length, removed: resolved.removed.length, skipped: resolved.skipped.length },
    'env resolved',
  );
  return resolved;
}
