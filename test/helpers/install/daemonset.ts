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

/**
 * A container's securityContext as `podman run` options, field by field as runc gets it from the
 * kubelet: privileged; runAsUser; capabilities drop and add (names as Kubernetes writes them,
 * CHOWN); allowPrivilegeEscalation false (no_new_privs); readOnlyRootFilesystem (and no tmpfs at
 * /tmp, /run, /var/tmp, which Podman's --read-only adds and the kubelet does not); seccompProfile
 * RuntimeDefault (Podman's default profile, of the same origin as containerd's; Unconfined
 * turns it off). A field it cannot stand for is refused, so that no test runs a manifest laxer than it reads.
 */
function securityOptions(sc: Record<string, any>): string[] {
  const known = ['privileged', 'runAsUser', 'capabilities', 'allowPrivilegeEscalation', 'readOnlyRootFilesystem', 'seccompProfile'];
  const unknown = Object.keys(sc).filter((k) => !known.includes(k));
  if (unknown.length) throw new Error(`securityContext ${unknown.join(', ')}: not run here`);
  const options: string[] = [];
  if (sc.privileged) options.push('--privileged');
  if (sc.runAsUser !== undefined) options.push('--user', String(sc.runAsUser));
  for (const c of sc.capabilities?.drop ?? []) options.push('--cap-drop', c === 'ALL' ? 'all' : c);
  for (const c of sc.capabilities?.add ?? []) options.push('--cap-add', c);
  if (sc.allowPrivilegeEscalation === false) options.push('--security-opt', 'no-new-privileges');
  if (sc.readOnlyRootFilesystem) options.push('--read-only', '--read-only-tmpfs=false');
  const seccomp = sc.seccompProfile?.type;
  if (seccomp !== undefined && seccomp !== 'RuntimeDefault' && seccomp !== 'Unconfined')
    throw new Error(`seccompProfile ${seccomp}: not run here`);
  if (seccomp === 'Unconfined') options.push('--security-opt', 'seccomp=unconfined');
  return options;
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
  options.push(...securityOptions(container.securityContext ?? {}));
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
