// Where install puts things. Every path here is a host path (as containerd, CRI-O and Podman
// will see it); `real()` maps it under --root, which the DaemonSet mounts at /host and tests
// point at a temporary directory.
import path from 'node:path';
import { EnvhookError } from '../errors.ts';

export const RUNTIMES = ['containerd', 'crio', 'podman'] as const;
export type Runtime = (typeof RUNTIMES)[number];

export const HANDLER = 'envhook';
// hooks/*.json name /usr/local/lib/envhook/envhook: the executable and the front side by side
export const DEFAULT_PREFIX = '/usr/local/lib/envhook';
export const DEFAULT_CONFIG: Record<Runtime, string> = {
  containerd: '/etc/containerd/config.toml',
  crio: '/etc/crio/crio.conf.d/50-envhook.conf',
  podman: '/etc/containers/containers.conf.d/50-envhook.conf',
};
/** CRI-O and Podman both read this by default; only the createRuntime file goes here. */
export const SHARED_HOOKS_DIR = '/usr/share/containers/oci/hooks.d';
/** Podman's default hooks_dir list, which setting hooks_dir replaces (containers.conf(5)). */
export const PODMAN_DEFAULT_HOOKS_DIRS = ['/usr/share/containers/oci/hooks.d', '/etc/containers/oci/hooks.d'];
export const PODMAN_MAIN_CONFIGS = ['/usr/share/containers/containers.conf', '/etc/containers/containers.conf'];
export const HOOK_FILES = { precreate: 'envhook-precreate.json', createRuntime: 'envhook-createruntime.json' } as const;

export interface Layout {
  root: string;
  prefix: string;
  /** The admin config file install registers in (containerd config.toml or a drop-in). */
  config: string;
  bin: string;
  front: string;
  /** The front's data file: the real runtime it execs (front-conf.ts). */
  conf: string;
  /** The bundle's launcher (no single executable), and the bundle it loads beside it. */
  lib: string;
  libMain: string;
  /** Podman's private hooks directory: the precreate file must stay out of CRI-O's reach. */
  podmanHooksDir: string;
  runtimeClass: string;
  state: string;
  backupDir: string;
  real(hostPath: string): string;
}

export function makeLayout(runtime: Runtime, opts: { root?: string; prefix?: string; config?: string }): Layout {
  const root = path.resolve(opts.root ?? '/');
  const prefix = absolute(opts.prefix ?? DEFAULT_PREFIX, '--prefix');
  return {
    root,
    prefix,
    config: absolute(opts.config ?? DEFAULT_CONFIG[runtime], '--config'),
    bin: path.posix.join(prefix, 'envhook'),
    front: path.posix.join(prefix, 'envhook-runtime'),
    conf: path.posix.join(prefix, 'envhook-runtime.conf'),
    lib: path.posix.join(prefix, 'envhook.cjs'),
    libMain: path.posix.join(prefix, 'envhook-main.cjs'),
    podmanHooksDir: path.posix.join(prefix, 'hooks.d'),
    runtimeClass: path.posix.join(prefix, 'runtimeclass.yaml'),
    state: path.posix.join(prefix, 'state.json'),
    backupDir: path.posix.join(prefix, 'backup'),
    real: (p) => path.join(root, p),
  };
}

/** The host path of the backup of `file` (kept out of .d directories that runtimes read). */
export function backupPath(layout: Layout, file: string): string {
  return path.posix.join(layout.backupDir, file);
}

export function absolute(p: string, flag: string): string {
  if (!path.posix.isAbsolute(p)) throw new EnvhookError(`${flag} must be an absolute host path`);
  const norm = path.posix.normalize(p);
  if (norm === '/') throw new EnvhookError(`${flag} must not be /`);
  return norm;
}
