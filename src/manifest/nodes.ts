// Typed access to yaml nodes: a manifest is untrusted input, so every step checks the node's
// kind instead of assuming the Kubernetes shape.
import { isMap, isScalar, isSeq, type Node, type Pair, type YAMLMap, type YAMLSeq } from 'yaml';

export function getMap(map: YAMLMap, key: string): YAMLMap | undefined {
  const v = map.get(key, true);
  return isMap(v) ? v : undefined;
}

export function getSeq(map: YAMLMap, key: string): YAMLSeq | undefined {
  const v = map.get(key, true);
  return isSeq(v) ? v : undefined;
}

/** A scalar string value; undefined when absent or of another type. */
export function getStr(map: YAMLMap, key: string): string | undefined {
  const v = map.get(key, true);
  return isScalar(v) && typeof v.value === 'string' ? v.value : undefined;
}

/** The maps of a sequence, with their index (other items skipped). */
export function mapsOf(seq: YAMLSeq | undefined): [YAMLMap, number][] {
  const out: [YAMLMap, number][] = [];
  seq?.items.forEach((item, i) => {
    if (isMap(item)) out.push([item, i]);
  });
  return out;
}

/** The pair of `key` in `map` (for its key's position). */
export function pairOf(map: YAMLMap, key: string): Pair | undefined {
  return map.items.find((p) => isScalar(p.key) && p.key.value === key);
}

/** Source offset of a node or of a pair's key; 0 when the node was created, not parsed. */
export function offsetOf(node: Node | Pair | null | undefined): number {
  if (!node) return 0;
  if ('range' in node && node.range) return node.range[0];
  if ('key' in node) return offsetOf(node.key as Node | null);
  return 0;
}

/** A JSON pointer (RFC 6901) from path elements: the paths lint and convert report. */
export const ptr = (...parts: (string | number)[]) => '/' + parts.map((p) => String(p).replace(/~/g, '~0').replace(/\//g, '~1')).join('/');
