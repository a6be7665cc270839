// The shipped DaemonSets and image recipes as data, for the tests that check them and the ones
// that run them under Podman: a DaemonSet's pod spec turned into `podman run` options (host
// network, privileged, user, hostPath volumes with their propagation) against a test's own
// stand-ins for the node's paths.
import fs from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { REPO } from '../bundle.ts';

export const NRI_DAEMONSET = 'examples/nri-daemonset.yaml';
export const INSTALLER_DAEMONSET = 'examples/daemonset.yaml';

/** The first document of a manifest under the repository, as plain data. */
export function readManifest(rel: string): any {
  const doc = parseAllDocuments(fs.readFileSync(path.join(REPO, rel), 'utf8'))[0];
  if (!doc || doc.errors.length) throw new Error(`${rel}: ${doc?.errors[0]?.message ?? 'empty'}`);
  return doc.toJS();
}

/** ENTRYPOINT and CMD of the last stage of a Dockerfile or Containerfile (JSON form), and its FROM. */
export function imageDirectives(text: string): { from: string; entrypoint?: string[]; cmd?: string[] } {
  const stages = text.split(/^(?=FROM\s)/m).filter((s) => /^FROM\s/.test(s));
  const last = stages.at(-1);
  if (!last) throw new Error('no FROM');
  const json = (k: string) => {
    const m = new RegExp(`^${k}\\s+(\\[.*\\])\\s*$`, 'm').exec(last);
    return m ? (JSON.parse(m[1]!) as string[]) : undefined;
  };
  return { from: /^FROM\s+(\S+)/.exec(last)![1]!, entrypoint: json('ENTRYPOINT'), cmd: json('CMD') };
}

export interface NodePaths {
  /** A host path the manifest names (a hostPath volume, a prefix of one) → the test's directory standing for it. */
  host: Record<string, string>;
  /**
   * Host paths the manifest mounts at the same path inside the container because the program
   * must see them where the runtime names them (the kubelet root): these move inside the
   * container too, and in the command's arguments.
   */
  samePath?: string[];
}

function translate(p: string, map: Record<string, string>, keys: readonly string[]): string {
  const key = keys.filter((k) => p === k || p.startsWith(k === '/' ? '/' : `${k}/`)).sort((a, b) => b.length - a.length)[0];
  if (key === undefined) return p;
  return path.join(map[key]!, path.relative(key, p));
}

/**
 * `podman run` options for one container of a pod spec (host network and PID namespace), and its command and args, with the
 * node's paths replaced by the test's (NodePaths). What Podman cannot stand for (probes,
 * resources, priority) is left to the checks on the manifest itself.
 */
export function podmanRunOf(spec: any, container: any, node: NodePaths): { options: string[]; command?: string[]; args?: string[] } {
  const hostKeys = Object.keys(node.host);
  const same = node.samePath ?? [];
  const inside = (p: string) => translate(p, node.host, same);
  const options = ['--net', spec.hostNetwork ? 'host' : 'none', ...(spec.hostPID ? ['--pid', 'host'] : [])];
  if (container.securityContext?.privileged) options.push('--privileged');
  if (container.securityContext?.runAsUser !== undefined) options.push('--user', String(container.securityContext.runAsUser));
  for (const m of container.volumeMounts ?? []) {
    const volume = spec.volumes.find((v: any) => v.name === m.name);
    if (!volume?.hostPath) throw new Error(`volume ${m.name}: only hostPath volumes are run here`);
    const source = translate(volume.hostPath.path, node.host, hostKeys);
    if (source === volume.hostPath.path) throw new Error(`hostPath ${source}: no stand-in for it in the test`);
    if (volume.hostPath.type === 'DirectoryOrCreate') fs.mkdirSync(source, { recursive: true });
    const flags = [
      m.readOnly ? 'ro' : 'rw',
      ...(({ HostToContainer: ['rslave'], Bidirectional: ['rshared'] } as Record<string, string[]>)[m.mountPropagation] ?? []),
    ];
    options.push('--volume', `${source}:${inside(m.mountPath)}:${flags.join(',')}`);
  }
  const args = (a?: string[]) => a?.map(inside);
  return { options, command: args(container.command), args: args(container.args) };
}
