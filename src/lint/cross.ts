// Checks the node cannot make before a start: the annotations against the rest of the pod.
// Each returns problems at a JSON path of the annotation; lint adds the position.
import { expand } from '../resolve/expand.ts';
import { fromSource, valueSource } from '../k8s/annotations.ts';
import { ATOMIC_TYPES, normalPath, type PodFacts, type VolumeFact } from '../manifest/pod-facts.ts';
import { getSeq, getStr, mapsOf, ptr } from '../manifest/nodes.ts';
import type { AnnotationProblem, PodAnnotations } from './read-annotations.ts';
import { didYouMean } from '../nearest.ts';
import { NOT_SET_UP } from '../k8s/volumes.ts';
import { ENV_FROM_KEY, ENV_KEY, SERVICE_LINKS_KEY, VOLUME_OWNERS } from '../k8s/annotation-keys.ts';

/** Volume sources the node reads env from; `csi` is an inline CSI volume (a PVC's is not). */
const ENV_SOURCE_TYPES = ['emptyDir', ...ATOMIC_TYPES, 'csi'] as const;

/** What every check of one pod reads, and where its problems go. */
interface CrossCheck {
  facts: PodFacts;
  a: PodAnnotations;
  volumes: Map<string, VolumeFact>;
  /** The volumes some container mounts. */
  mounted: Set<string>;
  out: AnnotationProblem[];
}

export function crossCheck(facts: PodFacts, a: PodAnnotations): AnnotationProblem[] {
  const c: CrossCheck = { facts, a, volumes: new Map(facts.volumes.map((v) => [v.name, v])), mounted: mountedVolumes(facts), out: [] };
  containersNamed(c);
  envSources(c);
  ownerVolumes(c);
  envNames(c);
  serviceLinks(c);
  return c.out;
}

const error = (c: CrossCheck, key: string, path: string, message: string) => c.out.push({ key, path, message, severity: 'error' });
const warn = (c: CrossCheck, key: string, path: string, message: string) => c.out.push({ key, path, message, severity: 'warning' });

/** Every container an annotation names is in the pod. */
function containersNamed(c: CrossCheck): void {
  const names = c.facts.containers.map((x) => x.name);
  for (const [key, value] of [
    [ENV_KEY, c.a.env],
    [ENV_FROM_KEY, c.a.envFrom],
    [SERVICE_LINKS_KEY, c.a.serviceLinks],
  ] as const) {
    for (const container of Object.keys(value ?? {})) {
      if (container === '*' || names.includes(container)) continue;
      error(c, key, ptr(container), `container ${JSON.stringify(container)} is not in the pod${didYouMean(container, names)}`);
    }
  }
}

/** fileKeyRef, fileRef and envFrom (fileRef, volumeRef) volumes (docs/design.md#env-from-other-volumes). */
function envSources(c: CrossCheck): void {
  for (const [name, list] of Object.entries(c.a.env ?? {})) {
    list.forEach((e, i) => {
      if (!e.valueFrom) return;
      const { field, ref } = valueSource(e.valueFrom);
      envSource(c, ENV_KEY, [name, String(i), 'valueFrom', field], ref, false);
    });
  }
  for (const [name, list] of Object.entries(c.a.envFrom ?? {})) {
    list.forEach((e, i) => {
      const { field, ref } = fromSource(e);
      envSource(c, ENV_FROM_KEY, [name, String(i), field], ref, field === 'volumeRef');
    });
  }
}

/**
 * An env source's volume: in the pod, and of a type the node reads env from. Where the volume
 * lists all its files (items), a path must be one of them, or for a volumeRef (`dir`) a
 * directory of them: any other is missing on the node, every start.
 */
function envSource(
  c: CrossCheck,
  key: string,
  at: string[],
  ref: { volumeName: string; path?: string | undefined; optional?: boolean | undefined },
  dir: boolean,
): void {
  const name = ref.volumeName;
  const v = c.volumes.get(name);
  if (!v)
    return void error(
      c,
      key,
      ptr(...at, 'volumeName'),
      `volume ${JSON.stringify(name)} is not in the pod${didYouMean(name, c.volumes.keys())}`,
    );
  if (!(ENV_SOURCE_TYPES as readonly (string | undefined)[]).includes(v.type)) {
    return void error(
      c,
      key,
      ptr(...at, 'volumeName'),
      `volume ${JSON.stringify(name)} is not an emptyDir, configMap, secret, projected, downwardAPI or CSI volume (${typeName(v)})`,
    );
  }
  // The kubelet sets up only the volumes some container mounts: on the node, the volume of an
  // env source no container mounts is not there, and every start fails.
  if (!c.mounted.has(name))
    return void error(c, key, ptr(...at, 'volumeName'), `volume ${JSON.stringify(name)} is mounted by no container: ${NOT_SET_UP}`);
  if (!v.complete || ref.path === undefined || !(ATOMIC_TYPES as readonly (string | undefined)[]).includes(v.type)) return;
  const p = normalPath(ref.path);
  const listed = v.files.map((f) => normalPath(f.path));
  if (dir ? listed.some((f) => f.startsWith(`${p}/`)) : listed.includes(p)) return;
  const what = `not among the ${dir ? 'directories of the ' : ''}files volume ${JSON.stringify(name)} lists in its items`;
  if (ref.optional) warn(c, key, ptr(...at, 'path'), `${what}: never set (optional)`);
  else error(c, key, ptr(...at, 'path'), what);
}

/** volumeOwners volumes: in the pod, of an atomic-writer type, item paths among its files. */
function ownerVolumes(c: CrossCheck): void {
  c.a.owners?.forEach((o, i) => {
    const v = c.volumes.get(o.volume);
    if (!v)
      return void error(
        c,
        VOLUME_OWNERS,
        ptr(i, 'volume'),
        `volume ${JSON.stringify(o.volume)} is not in the pod${didYouMean(o.volume, c.volumes.keys())}`,
      );
    if (!(ATOMIC_TYPES as readonly (string | undefined)[]).includes(v.type)) {
      return void error(
        c,
        VOLUME_OWNERS,
        ptr(i, 'volume'),
        `volume ${JSON.stringify(o.volume)} is not a configMap, secret, projected or downwardAPI volume (${typeName(v)})`,
      );
    }
    if (!v.complete) return;
    const listed = new Set(v.files.map((f) => normalPath(f.path)));
    o.items.forEach((item, j) => {
      if (!listed.has(item.key))
        error(c, VOLUME_OWNERS, ptr(i, 'items', j, 'path'), `not among the files volume ${JSON.stringify(o.volume)} lists in its items`);
    });
  });
}

/** Names defined twice, and $(VAR) references to names defined nowhere earlier. */
function envNames(c: CrossCheck): void {
  for (const [name, list] of Object.entries(c.a.env ?? {})) {
    const first = new Map<string, number>();
    const known = knownNames(c.facts, c.a, name);
    list.forEach((e, i) => {
      if (e.value !== undefined) {
        const refs: string[] = [];
        expand(e.value, (ref) => void refs.push(ref));
        refs.forEach((ref, k) => {
          if (!first.has(ref) && !known(ref)) {
            warn(
              c,
              ENV_KEY,
              ptr(name, i, 'value'),
              `$(…) reference ${k + 1} names a variable defined nowhere earlier in the pod (only the image could define it); it stays as written`,
            );
          }
        });
      }
      const at = first.get(e.name);
      if (at !== undefined) warn(c, ENV_KEY, ptr(name, i, 'name'), `name defined again (first at ${ptr(name, at)}): the last one wins`);
      else first.set(e.name, i);
    });
  }
}

/** serviceLinks true cannot bring back what the pod's enableServiceLinks: false left out. */
function serviceLinks(c: CrossCheck): void {
  if (c.facts.spec?.get('enableServiceLinks') !== false) return;
  for (const [name, on] of Object.entries(c.a.serviceLinks ?? {})) {
    if (on)
      warn(
        c,
        SERVICE_LINKS_KEY,
        ptr(name),
        'true has no effect: the pod sets enableServiceLinks: false, so the kubelet makes no service variables',
      );
  }
}

/** Names of the volumes a container or init container of the pod mounts (or uses as a block device). */
function mountedVolumes(facts: PodFacts): Set<string> {
  const names = new Set<string>();
  for (const c of facts.containers) {
    for (const list of ['volumeMounts', 'volumeDevices']) {
      for (const [m] of mapsOf(getSeq(c.node, list))) {
        const name = getStr(m, 'name');
        if (name !== undefined) names.add(name);
      }
    }
  }
  return names;
}

function typeName(v: VolumeFact): string {
  return v.type ? `its source is ${v.type}` : 'it has no known volume source';
}

const SERVICE_VAR = /^[A-Z0-9_]+_(SERVICE_HOST|SERVICE_PORT(_[A-Z0-9_]+)?|PORT(_\d+_(TCP|UDP|SCTP)(_PROTO|_PORT|_ADDR)?)?)$/;

/**
 * Whether a name may be defined before container `c`'s env annotation entries: its own `env`
 * (all of it: the runtime's env comes first), its `envFrom` and the envFrom annotation (any
 * name with their prefix; any name at all without one), and service variables where the kubelet
 * makes them.
 */
function knownNames(facts: PodFacts, a: PodAnnotations, c: string): (name: string) => boolean {
  const container = facts.containers.find((x) => x.name === c)?.node;
  const names = new Set<string>();
  const prefixes: string[] = [];
  for (const [e] of mapsOf(container && getSeq(container, 'env'))) {
    const n = getStr(e, 'name');
    if (n !== undefined) names.add(n);
  }
  for (const [e] of mapsOf(container && getSeq(container, 'envFrom'))) prefixes.push(getStr(e, 'prefix') ?? '');
  for (const e of a.envFrom?.[c] ?? []) prefixes.push(e.prefix ?? '');
  const off = a.serviceLinks?.[c] ?? a.serviceLinks?.['*'];
  const links = facts.spec?.get('enableServiceLinks') !== false && off !== false;
  return (name) =>
    names.has(name) || prefixes.some((p) => name.startsWith(p)) || (SERVICE_VAR.test(name) && (links || name.startsWith('KUBERNETES_')));
}
