// Every envhook.io/ annotation name, in one place (docs/design.md#annotations, #marks). The pod author writes the
// first five (untrusted: each is read with its JSON Schema, k8s/annotations.ts and
// ownership/annotation.ts); envhook itself writes the two marks on a container it applied.

/** The prefix of every envhook annotation: containerd passes `envhook.io/*` to envhook's handler. */
export const ENVHOOK_PREFIX = 'envhook.io/';

export const ENV_KEY = 'envhook.io/env';
export const ENV_FROM_KEY = 'envhook.io/envFrom';
export const SERVICE_LINKS_KEY = 'envhook.io/serviceLinks';
/** The env annotations: the applied mark is a digest of these. */
export const ENV_KEYS = [ENV_KEY, ENV_FROM_KEY, SERVICE_LINKS_KEY] as const;
/** KEP-5936 volume owners. */
export const VOLUME_OWNERS = 'envhook.io/volumeOwners';
/** `"true"`: containers of the pod created while `envhook nri` was away are evicted (docs/nri-guarantees.md#evicting-missed-containers). */
export const EVICT_KEY = 'envhook.io/evictUnapplied';
/** What a pod author may write (lint names the nearest for any other envhook.io/ key). */
export const POD_AUTHOR_KEYS = [ENV_KEY, ENV_FROM_KEY, SERVICE_LINKS_KEY, VOLUME_OWNERS, EVICT_KEY] as const;

/** The applied mark: set by the config.json and NRI appliers when they applied env (plan/mark.ts). */
export const APPLIED_KEY = 'envhook.io/applied';
/** The names mark: names (never values) of what the config.json applier set and removed. */
export const APPLIED_ENV_KEY = 'envhook.io/applied-env';
