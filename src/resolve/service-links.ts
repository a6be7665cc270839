// Docker-link service variables, as the kubelet makes them (pkg/kubelet/envvars): for a
// service `my-svc` (name upper-cased, '-' → '_': X = MY_SVC) with a cluster IP:
//   X_SERVICE_HOST, X_SERVICE_PORT, X_SERVICE_PORT_<PORTNAME> (named ports),
//   X_PORT (first port's URL), and per port X_PORT_<n>_<PROTO> with _PROTO, _PORT and _ADDR.
//
// The rule we apply (a variable list carries no record of where each name came from): a
// service exists only where its X_SERVICE_HOST is present; then, and only then, its family as
// listed above is removed. So an application's own FOO_PORT or FOO_SERVICE_PORT survives unless
// a FOO_SERVICE_HOST is also set. The `kubernetes` service (KUBERNETES_*) is always kept, as
// the kubelet keeps it with enableServiceLinks: false, even where a name of its family would
// also fit another service's family (a service named kubernetes-service has X_PORT =
// KUBERNETES_SERVICE_PORT).

const HOST_SUFFIX = '_SERVICE_HOST';
const KEPT = 'KUBERNETES';
/** Port names are IANA service names (lowercase letters, digits, '-'), upper-cased by the kubelet. */
const PORT_FAMILY = /^(?:_SERVICE_HOST|_SERVICE_PORT|_SERVICE_PORT_[A-Z0-9_]+|_PORT|_PORT_\d+_(?:TCP|UDP|SCTP)(?:_PROTO|_PORT|_ADDR)?)$/;

/** Service name prefixes (X) that have an X_SERVICE_HOST among `names`, except KUBERNETES. */
export function servicePrefixes(names: Iterable<string>): Set<string> {
  const out = new Set<string>();
  for (const name of names) {
    if (name.length > HOST_SUFFIX.length && name.endsWith(HOST_SUFFIX)) {
      const prefix = name.slice(0, -HOST_SUFFIX.length);
      if (prefix !== KEPT) out.add(prefix);
    }
  }
  return out;
}

function inFamily(name: string, prefix: string): boolean {
  return name.startsWith(prefix) && PORT_FAMILY.test(name.slice(prefix.length));
}

/**
 * True when `name` is X + a family suffix for some X in `prefixes`. Every family suffix starts
 * with `_SERVICE_` or `_PORT`, so the only candidate prefixes are the name cut before one of
 * those: a few Set lookups a name instead of a scan of every service (5,000 services and
 * 35,000 variables made that scan 175 million prefix tests, over a second).
 */
const MARKERS = ['_SERVICE_', '_PORT'] as const;
function inAnyFamily(name: string, prefixes: ReadonlySet<string>): boolean {
  for (const marker of MARKERS) {
    for (let i = name.indexOf(marker, 1); i > 0; i = name.indexOf(marker, i + 1)) {
      if (prefixes.has(name.slice(0, i)) && PORT_FAMILY.test(name.slice(i))) return true;
    }
  }
  return false;
}

/** The names among `names` that removal of service links drops, in their original order. */
export function serviceLinkNames(names: readonly string[]): string[] {
  const prefixes = servicePrefixes(names);
  if (prefixes.size === 0) return [];
  return [...new Set(names.filter((name) => !inFamily(name, KEPT) && inAnyFamily(name, prefixes)))];
}
