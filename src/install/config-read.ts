// The file install registers in must be one the runtime reads: a --config it would never load
// (a typo, a directory it does not scan) is refused with how to name the right one, before
// anything is written. containerd loads /etc/containerd/config.toml unless its service starts it
// with --config FILE, which only the admin knows: --service-config says so. CRI-O reads drop-ins
// from its config_dir, /etc/crio/crio.conf.d, every file under it; Podman reads the `.conf` files
// of containers.conf.d next to its main files (containers.conf(5)).
import fs from 'node:fs';
import path from 'node:path';
import { EnvhookError } from '../errors.ts';
import { DEFAULT_CONFIG, PODMAN_MAIN_CONFIGS, type Layout, type Runtime } from './layout.ts';

/** CRI-O's config_dir: the drop-ins it reads, every file under it in filepath.Walk order. */
export const CRIO_DROP_IN_DIR = '/etc/crio/crio.conf.d';

export function refuseUnreadConfig(layout: Layout, runtime: Runtime, serviceConfig: boolean | undefined): void {
  const file = layout.config;
  if (serviceConfig && runtime !== 'containerd')
    throw new EnvhookError('--service-config is only valid with --runtime containerd (it says containerd is started with --config FILE)');
  if (runtime === 'containerd') return; // containerd's plans call refuseUnloadedRoot after their own, closer, refusals
  if (runtime === 'crio') {
    if (file.startsWith(`${CRIO_DROP_IN_DIR}/`)) return;
    throw new EnvhookError(`--config ${file}: CRI-O reads drop-ins only from ${CRIO_DROP_IN_DIR}: name a file there`);
  }
  const dirs = PODMAN_MAIN_CONFIGS.map((m) => `${m}.d`);
  if (file.endsWith('.conf') && dirs.includes(path.posix.dirname(file))) return;
  throw new EnvhookError(`--config ${file}: Podman reads drop-ins only as *.conf files in ${dirs.join(' or ')}: name one there`);
}

/** containerd: a --config that is not the root file containerd loads. */
export function refuseUnloadedRoot(layout: Layout, serviceConfig: boolean | undefined): void {
  const file = layout.config;
  if (file === DEFAULT_CONFIG.containerd || serviceConfig) return;
  throw new EnvhookError(
    `--config ${file}: containerd loads ${DEFAULT_CONFIG.containerd} unless its service starts it with --config FILE; if it starts containerd with --config ${file}, add --service-config; otherwise leave --config out`,
  );
}

/** `--root` is the node's root: a directory that exists (install never creates a node). */
export function refuseBadRoot(root: string): void {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(root);
  } catch {
    throw new EnvhookError(`--root ${root} does not exist: name the node's root directory (the installer DaemonSet mounts it at /host)`);
  }
  if (!stat.isDirectory()) throw new EnvhookError(`--root ${root} is not a directory: name the node's root directory`);
}
