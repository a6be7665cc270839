// The pods of a manifest: Pod objects and the pod templates of workload objects, also inside
// List objects (`kind: List`, `PodList`, `DeploymentList`, … with `items`). Other kinds are not
// pods and are skipped.
import { isMap, isSeq, type Document, type YAMLMap } from 'yaml';
import { getMap, getStr } from './nodes.ts';

/** Where each kind keeps its pod template, as a path of map keys from the object. */
const TEMPLATE_PATH: Record<string, readonly string[]> = {
  Pod: [],
  PodTemplate: ['template'],
  Deployment: ['spec', 'template'],
  StatefulSet: ['spec', 'template'],
  DaemonSet: ['spec', 'template'],
  ReplicaSet: ['spec', 'template'],
  ReplicationController: ['spec', 'template'],
  Job: ['spec', 'template'],
  CronJob: ['spec', 'jobTemplate', 'spec', 'template'],
};

export interface PodRef {
  doc: Document.Parsed;
  /** The object that holds `metadata` and `spec`: a Pod, or a workload's pod template. */
  pod: YAMLMap;
  /** The Kubernetes object it belongs to (the Pod itself for a Pod). */
  object: YAMLMap;
  kind: string;
}

export function podsOf(doc: Document.Parsed): PodRef[] {
  const out: PodRef[] = [];
  if (isMap(doc.contents)) collect(doc, doc.contents, out, 0);
  return out;
}

function collect(doc: Document.Parsed, object: YAMLMap, out: PodRef[], depth: number): void {
  const kind = getStr(object, 'kind');
  if (kind === undefined) return;
  const items = object.get('items', true);
  if (kind.endsWith('List') && isSeq(items) && depth < 4) {
    for (const item of items.items) if (isMap(item)) collect(doc, item, out, depth + 1);
    return;
  }
  const path = Object.hasOwn(TEMPLATE_PATH, kind) ? TEMPLATE_PATH[kind]! : undefined;
  if (!path) return;
  let pod: YAMLMap | undefined = object;
  for (const key of path) pod = pod && getMap(pod, key);
  if (pod) out.push({ doc, pod, object, kind });
}
