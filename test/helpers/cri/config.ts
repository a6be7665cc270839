// config.toml for a private containerd with the CRI plugin: own root, state, sockets, runc
// root, CNI and opt directories under one temporary directory, nothing shared with the host's
// containerd. Version 2 for Debian's containerd 1.6 and trixie's 1.7, version 3 for containerd
// 2.1 (sid).
// The default handler `runc` runs the real runc with a private --root (Root); `envhook install`
// copies those options into its handler.
import path from 'node:path';

export type ContainerdVersion = '1.6' | '1.7' | '2.1';

export interface CriConfigOptions {
  version: ContainerdVersion;
  dir: string;
  runc: string;
  sandboxImage: string;
  /** NRI on (1.7 and 2.1) with its socket, plugin and plugin-config directories under `dir`. */
  nri?: boolean;
  /** TOML appended as is (extra runtime handlers, plugin settings). */
  extra?: string;
  /** The root file's `imports` (drop-in layouts), as written. */
  imports?: string[];
}

// The sandbox's oom_score_adj is -998; a machine whose own processes may not lower theirs
// (a test VM or a nested container) refuses it, so keep the score at or above ours, as
// containerd does for rootless and nested setups.
const RESTRICT_OOM = '  restrict_oom_score_adj = true';

const q = (s: string) => JSON.stringify(s);

/** Paths of a private containerd under `dir` (short: unix sockets are limited to 108 bytes). */
export function criPaths(dir: string) {
  return {
    config: path.join(dir, 'config.toml'),
    root: path.join(dir, 'root'),
    state: path.join(dir, 'state'),
    address: path.join(dir, 'sock'),
    ttrpc: path.join(dir, 'sock.ttrpc'),
    runcRoot: path.join(dir, 'runc'),
    nriSocket: path.join(dir, 'nri.sock'),
    nriPlugins: path.join(dir, 'nri/plugins'),
    nriConf: path.join(dir, 'nri/conf.d'),
    log: path.join(dir, 'containerd.log'),
  };
}

const DISABLED = ['btrfs', 'zfs', 'aufs', 'devmapper']
  .map((s) => `io.containerd.snapshotter.v1.${s}`)
  .concat(['io.containerd.tracing.processor.v1.otlp', 'io.containerd.internal.v1.tracing']);

export function criConfig(o: CriConfigOptions): string {
  const p = criPaths(o.dir);
  const head = [
    `version = ${o.version === '2.1' ? 3 : 2}`,
    ...(o.imports ? [`imports = ${JSON.stringify(o.imports)}`] : []),
    `root = ${q(p.root)}`,
    `state = ${q(p.state)}`,
    `disabled_plugins = ${JSON.stringify(DISABLED)}`,
    '[grpc]',
    `  address = ${q(p.address)}`,
    '[ttrpc]',
    `  address = ${q(p.ttrpc)}`,
    `[plugins.${q('io.containerd.internal.v1.opt')}]`,
    `  path = ${q(path.join(o.dir, 'opt'))}`,
  ];
  const body = o.version === '2.1' ? v3(o, p) : v2(o, p);
  return [...head, ...body, o.extra ?? '', ''].join('\n');
}

function runc(prefix: string, o: CriConfigOptions, p: ReturnType<typeof criPaths>): string[] {
  return [
    `[${prefix}.runtimes.runc]`,
    '  runtime_type = "io.containerd.runc.v2"',
    `[${prefix}.runtimes.runc.options]`,
    `  BinaryName = ${q(o.runc)}`,
    `  Root = ${q(p.runcRoot)}`,
  ];
}

function v2(o: CriConfigOptions, p: ReturnType<typeof criPaths>): string[] {
  if (o.nri && o.version === '1.6') throw new Error('containerd 1.6 has no NRI (1.7 and later)');
  const cri = `plugins.${q('io.containerd.grpc.v1.cri')}`;
  return [
    `[${cri}]`,
    `  sandbox_image = ${q(o.sandboxImage)}`,
    RESTRICT_OOM,
    '  stream_server_address = "127.0.0.1"',
    '  stream_server_port = "0"',
    `[${cri}.cni]`,
    `  bin_dir = ${q(path.join(o.dir, 'cni/bin'))}`,
    `  conf_dir = ${q(path.join(o.dir, 'cni/conf'))}`,
    `[${cri}.containerd]`,
    '  snapshotter = "overlayfs"',
    '  default_runtime_name = "runc"',
    ...runc(`${cri}.containerd`, o, p),
    // 1.7 has NRI (off by default): the same private table as 2.1's. An explicit `disable = false`
    // is a file `envhook install --mode nri` leaves as it is.
    ...(o.version === '1.7' ? nriTable(o, p) : []),
  ];
}

function nriTable(o: CriConfigOptions, p: ReturnType<typeof criPaths>): string[] {
  return [
    `[plugins.${q('io.containerd.nri.v1.nri')}]`,
    `  disable = ${o.nri ? 'false' : 'true'}`,
    `  socket_path = ${q(p.nriSocket)}`,
    `  plugin_path = ${q(p.nriPlugins)}`,
    `  plugin_config_path = ${q(p.nriConf)}`,
    // NRI's default is 5 s, for all three Node starts of a pre-installed envhook: containerd 1.7
    // then fails its CRI service (docs/nri.md), as seen at a load of 40 on the 2 test CPUs.
    '  plugin_registration_timeout = "30s"',
  ];
}

function v3(o: CriConfigOptions, p: ReturnType<typeof criPaths>): string[] {
  const images = `plugins.${q('io.containerd.cri.v1.images')}`;
  const rt = `plugins.${q('io.containerd.cri.v1.runtime')}`;
  return [
    `[${images}]`,
    '  snapshotter = "overlayfs"',
    `[${images}.pinned_images]`,
    `  sandbox = ${q(o.sandboxImage)}`,
    `[${rt}]`,
    RESTRICT_OOM,
    `  cdi_spec_dirs = [${q(path.join(o.dir, 'cdi'))}]`,
    `[${rt}.cni]`,
    `  bin_dirs = [${q(path.join(o.dir, 'cni/bin'))}]`,
    `  conf_dir = ${q(path.join(o.dir, 'cni/conf'))}`,
    `[${rt}.containerd]`,
    '  default_runtime_name = "runc"',
    ...runc(`${rt}.containerd`, o, p),
    `[plugins.${q('io.containerd.grpc.v1.cri')}]`,
    '  stream_server_address = "127.0.0.1"',
    '  stream_server_port = "0"',
    `[plugins.${q('io.containerd.image-verifier.v1.bindir')}]`,
    `  bin_dir = ${q(path.join(o.dir, 'verifiers'))}`,
    // NRI is on by default in 2.x with the host's /var/run/nri/nri.sock: always our own, or off.
    ...nriTable(o, p),
  ];
}
