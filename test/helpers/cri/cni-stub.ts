// A pod network without a network: a CNI plugin stub (sh) that answers ADD with an eth0 and an
// address it never configures, and everything else with success. containerd creates a pod
// network namespace only when the pod does not use the host's network, and a pod in a user
// namespace (`hostUsers: false`) cannot use the host's: its sandbox's namespaces are pinned
// through the pod's network namespace. containerd also runs a `loopback` plugin of its own for
// every pod: the stub plays it too. Nothing on the host is touched (no interface, no route).
import fs from 'node:fs';
import path from 'node:path';

const PLUGIN = 'envhook-cni-stub';
const SCRIPT = `#!/bin/sh
cat >/dev/null
case "$CNI_COMMAND" in
ADD) printf '{"cniVersion":"1.0.0","interfaces":[{"name":"eth0","sandbox":"%s"}],"ips":[{"address":"10.233.0.2/24","interface":0}]}' "$CNI_NETNS" ;;
VERSION) printf '{"cniVersion":"1.0.0","supportedVersions":["0.3.0","0.3.1","0.4.0","1.0.0"]}' ;;
esac
exit 0
`;

/** Files for prepareCriContainerd's `files` (relative to its directory); then makeCniStubExecutable. */
export const CNI_STUB_FILES: Record<string, string> = {
  [`cni/bin/${PLUGIN}`]: SCRIPT,
  'cni/bin/loopback': SCRIPT,
  'cni/conf/10-envhook-stub.conflist': JSON.stringify({ cniVersion: '1.0.0', name: 'envhook-stub', plugins: [{ type: PLUGIN }] }),
};

export function makeCniStubExecutable(dir: string): void {
  for (const bin of [PLUGIN, 'loopback']) fs.chmodSync(path.join(dir, 'cni/bin', bin), 0o755);
}
