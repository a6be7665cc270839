// What the plan decided for one container: the one input of every applier (config.json, NRI
// adjustment, exec process) and of the chown. Holds values (env) and open directories (owners):
// never logged as such; summarize() gives the names-only view that logs and --dry-run show.
import type { ResolvedEnv } from '../resolve/env.ts';
import type { OwnedFile, PreparedVolume } from '../ownership/prepare.ts';

export interface Changes {
  container: string | undefined;
  sandbox: boolean;
  /** The env changes; undefined when no env annotation has an entry for this container. */
  env: ResolvedEnv | undefined;
  /** Volumes whose files get owners, checked and open (release with releaseOwners). */
  owners: PreparedVolume[];
  /** The envhook.io/applied value to set; undefined when env was not applied. */
  mark: string | undefined;
}

/** What was (or, in a dry run, would be) done: names and sources, never values. */
export interface Plan {
  container: string | undefined;
  sandbox: boolean;
  env: { name: string; source: string }[];
  removed: string[];
  /** Optional env references whose file or key was missing (nothing set for them). */
  skipped?: { name: string; source: string }[];
  owners: OwnedFile[];
}

export function summarize(changes: Changes, owned: OwnedFile[]): Plan {
  const { container, sandbox, env } = changes;
  if (sandbox) return { container, sandbox, env: [], removed: [], owners: [] };
  return {
    container,
    sandbox,
    env: env?.set ?? [],
    removed: env?.removed ?? [],
    ...(env ? { skipped: env.skipped } : {}),
    owners: owned,
  };
}
