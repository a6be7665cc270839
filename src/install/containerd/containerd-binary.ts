// The containerd binary, when there is one to ask: its line (1.x or 2.x, whose merge rules
// differ), the config version it writes by default (for a node with no config file yet), and
// `config dump`, its own reading of the files, which is the check after install. containerd
// answers these without a running daemon.
import path from 'node:path';
import type { Family } from './containerd-files.ts';
import { parseToml, tableAt, type Table } from '../toml.ts';
import {
  failureWords,
  findNodeBinary,
  RuntimeReadFailed,
  runRuntimeBinary,
  versionMatch,
  type RuntimeBinary,
} from '../../oci/runtime-binary.ts';

export interface ContainerdBinary extends RuntimeBinary {
  /** As `containerd --version` prints it (2.1.9, 1.6.20~ds1). */
  version: string;
  family: Family;
}

/**
 * `explicit` (--containerd: a binary of this machine, run here), else the node's containerd under
 * `root` (run inside it), else undefined (missingBinary says why).
 */
export function findContainerd(explicit: string | undefined, root = '/'): ContainerdBinary | undefined {
  const bin = findNodeBinary('containerd', explicit, root);
  if (!bin) return undefined;
  // `containerd <package> <version> <revision>`, as every containerd prints it: another program's
  // version line (`runc version 1.1.12`) is not taken for a containerd's.
  const m = versionMatch(bin, 'containerd', /^containerd\s+\S+\s+v?((\d+)\.(\d+)\.(\d+)\S*)/m);
  return { ...bin, version: m[1]!, family: Number(m[2]) >= 2 ? '2.x' : '1.x' };
}

const defaults = new Map<string, Table>();

/** `containerd config default`, asked once per binary: containerd's own reading of no file. */
function configDefault(bin: ContainerdBinary): Table {
  const key = path.join(bin.root, bin.path);
  let doc = defaults.get(key);
  if (doc === undefined) {
    doc = run(bin, ['config', 'default'], '/');
    defaults.set(key, doc);
  }
  return doc;
}

/** The config version `containerd config default` writes: what a new root file gets, the newest it reads. */
export function defaultConfigVersion(bin: ContainerdBinary): number {
  const doc = configDefault(bin);
  return typeof doc.version === 'number' ? doc.version : 2;
}

/** The keys containerd 2.0-2.1 keep in [plugins."io.containerd.grpc.v1.cri"] (the CRI server's own settings). */
const CRI_SERVER_KEYS_21 = [
  'disable_tcp_service',
  'stream_server_address',
  'stream_server_port',
  'stream_idle_timeout',
  'enable_tls_streaming',
  'x509_key_pair_streaming',
];

/**
 * The keys a containerd 2.x reads in [plugins."io.containerd.grpc.v1.cri"] of a version 3 config
 * (its CRI server: streaming, TLS): the keys of that table in the binary's own `config default`,
 * which `config dump` prints with the same fields; with no binary, those of containerd 2.0-2.1.
 * Any other key there (the version 2 layout's `containerd`, `registry`, `cni`...) is not read.
 */
export function criServerKeys(bin: ContainerdBinary | undefined): ReadonlySet<string> {
  if (!bin || bin.family !== '2.x') return new Set(CRI_SERVER_KEYS_21);
  const server = tableAt(configDefault(bin), 'plugins', 'io.containerd.grpc.v1.cri');
  return new Set(server ? Object.keys(server) : CRI_SERVER_KEYS_21);
}

/**
 * `containerd --config FILE config dump`: the merged configuration. `file` as the binary sees it
 * (oci/runtime-binary.ts pathFor); `cwd` stands for containerd's working directory (/ under
 * systemd, and inside a root), against which containerd 1.x expands relative patterns.
 */
export function configDump(bin: ContainerdBinary, file: string, cwd: string): Table {
  return run(bin, ['--config', file, 'config', 'dump'], cwd);
}

function run(bin: ContainerdBinary, args: string[], cwd: string): Table {
  const r = runRuntimeBinary(bin, args, { cwd });
  // containerd's last line says what it could not read (a path, a TOML position)
  if (r.status !== 0) throw new RuntimeReadFailed(`containerd ${bin.version} (${bin.path} ${args.join(' ')}) failed: ${failureWords(r)}`);
  return parseToml(r.stdout, `the output of ${bin.path} ${args.slice(-2).join(' ')}`);
}
