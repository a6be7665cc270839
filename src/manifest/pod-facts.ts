// What lint and convert need to know of one pod: its envhook.io/* annotations (raw), its
// containers, its volumes with their type and the file paths they list. Read once from the
// yaml nodes, which stay attached so convert can edit them and lint can point at them.
import { isMap, isScalar, type Pair, type YAMLMap } from 'yaml';
import { splitRelative } from '../fs/confined.ts';
import { getMap, getSeq, getStr, mapsOf, pairOf } from './nodes.ts';
import type { PodRef } from './pods.ts';
import { ENVHOOK_PREFIX } from '../k8s/annotation-keys.ts';

/** Volume types whose files the kubelet's atomic writer lays out (KEP-5936). */
export const ATOMIC_TYPES = ['configMap', 'secret', 'projected', 'downwardAPI'] as const;

interface AnnotationFact {
  /** The annotation's value as the manifest has it: a string, or whatever else was written. */
  value: unknown;
  pair: Pair;
}

interface ContainerFact {
  name: string;
  node: YAMLMap;
  /** Index in spec.containers or spec.initContainers. */
  list: 'containers' | 'initContainers';
  index: number;
}

/** A file a volume lists, and the node that would carry its KEP-5936 `user`. */
interface ListedFile {
  path: string;
  /** undefined where one `user` covers several files (podCertificate): no per-path owner. */
  node: YAMLMap | undefined;
}

export interface VolumeFact {
  name: string;
  node: YAMLMap;
  /** The volume source key (`emptyDir`, `configMap`, …); undefined when none is known. */
  type: string | undefined;
  source: YAMLMap | undefined;
  /** The files the volume lists in `items` (and the projected sources' `path`s). */
  files: ListedFile[];
  /** Whether `files` are all the volume has (false: some source projects every key, no `items`). */
  complete: boolean;
}

export interface PodFacts {
  ref: PodRef;
  metadata: YAMLMap | undefined;
  annotationsNode: YAMLMap | undefined;
  /** envhook.io/* annotations in the order written. */
  annotations: Map<string, AnnotationFact>;
  spec: YAMLMap | undefined;
  containers: ContainerFact[];
  volumes: VolumeFact[];
}

const SOURCE_KEYS = new Set([
  'emptyDir',
  'configMap',
  'secret',
  'projected',
  'downwardAPI',
  'hostPath',
  'persistentVolumeClaim',
  'ephemeral',
  'image',
  'csi',
  'nfs',
  'iscsi',
  'rbd',
  'cephfs',
  'fc',
  'flexVolume',
  'azureFile',
  'azureDisk',
  'awsElasticBlockStore',
  'gcePersistentDisk',
  'gitRepo',
  'glusterfs',
  'portworxVolume',
  'quobyte',
  'scaleIO',
  'storageos',
  'vsphereVolume',
  'photonPersistentDisk',
  'flocker',
  'cinder',
]);

export function podFacts(ref: PodRef): PodFacts {
  const metadata = getMap(ref.pod, 'metadata');
  const annotationsNode = metadata && getMap(metadata, 'annotations');
  const annotations = new Map<string, AnnotationFact>();
  for (const pair of annotationsNode?.items ?? []) {
    if (!isScalar(pair.key) || typeof pair.key.value !== 'string' || !pair.key.value.startsWith(ENVHOOK_PREFIX)) continue;
    const v = pair.value;
    // A scalar's value; a map or list written where the JSON text belongs, as data (refused later).
    annotations.set(pair.key.value, { value: isScalar(v) ? v.value : v ? (v as { toJSON(): unknown }).toJSON() : null, pair });
  }
  const spec = getMap(ref.pod, 'spec');
  const containers: ContainerFact[] = [];
  for (const list of ['initContainers', 'containers'] as const) {
    for (const [node, index] of mapsOf(spec && getSeq(spec, list))) {
      const name = getStr(node, 'name');
      if (name !== undefined) containers.push({ name, node, list, index });
    }
  }
  const volumes: VolumeFact[] = [];
  for (const [node] of mapsOf(spec && getSeq(spec, 'volumes'))) {
    const name = getStr(node, 'name');
    if (name === undefined) continue;
    const typePair = node.items.find((p) => isScalar(p.key) && SOURCE_KEYS.has(String(p.key.value)));
    const type = typePair ? String((typePair.key as { value: unknown }).value) : undefined;
    const source = type ? getMap(node, type) : undefined;
    const listed = source && type ? listedFiles(type, source) : { files: [], complete: false };
    volumes.push({ name, node, type, source, ...listed });
  }
  return { ref, metadata, annotationsNode, annotations, spec, containers, volumes };
}

export function pairFor(facts: PodFacts, key: string): Pair | undefined {
  return facts.annotationsNode && pairOf(facts.annotationsNode, key);
}

/** The files an atomic-writer volume lists, and whether that is all of them. */
function listedFiles(type: string, source: YAMLMap): { files: ListedFile[]; complete: boolean } {
  const items = (map: YAMLMap): ListedFile[] => mapsOf(getSeq(map, 'items')).flatMap(([n]) => fileOf(n));
  switch (type) {
    case 'configMap':
    case 'secret':
      return { files: items(source), complete: getSeq(source, 'items') !== undefined };
    case 'downwardAPI':
      return { files: items(source), complete: true };
    case 'projected': {
      const files: ListedFile[] = [];
      let complete = true;
      for (const [src] of mapsOf(getSeq(source, 'sources'))) {
        for (const pair of src.items) {
          const kind = isScalar(pair.key) ? String(pair.key.value) : '';
          const proj = pair.value;
          if (!isMap(proj)) continue;
          if (kind === 'configMap' || kind === 'secret') {
            if (!getSeq(proj, 'items')) complete = false;
            files.push(...items(proj));
          } else if (kind === 'downwardAPI') files.push(...items(proj));
          else if (kind === 'serviceAccountToken' || kind === 'clusterTrustBundle') files.push(...fileOf(proj));
          else if (kind === 'podCertificate') {
            for (const k of ['credentialBundlePath', 'keyPath', 'certificateChainPath']) {
              const p = getStr(proj, k);
              if (p !== undefined) files.push({ path: p, node: undefined });
            }
          } else complete = false;
        }
      }
      return { files, complete };
    }
    default:
      return { files: [], complete: false };
  }
}

function fileOf(node: YAMLMap): ListedFile[] {
  const path = getStr(node, 'path');
  return path === undefined ? [] : [{ path, node }];
}

/** A volume path in one spelling (`a//b`, `./a/b` → `a/b`), for comparing; as is if invalid. */
export function normalPath(path: string): string {
  try {
    return splitRelative(path).join('/');
  } catch {
    return path;
  }
}
