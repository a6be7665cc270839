// The containerd binary, when there is one to ask: its line (1.x or 2.x, whose merge rules
// differ), the config version it writes by default (for a node with no config file yet), and
// `config dump`, its own reading of the files, which is the check after install. containerd
// answers these without a running daemon.
import path from 'node:path';
import type { Family } from './containerd-files.ts';
import { parseToml, type Table } from '../toml.ts';
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

const defaults = new Map<string, number>();

/** The config version `containerd config default` writes: what a new root file gets, the newest it reads. */
export function defaultConfigVersion(bin: ContainerdBinary): number {
  const key = path.join(bin.root, bin.path);
  let v = defaults.get(key);
  if (v === undefined) {
    const doc = run(bin, ['config', 'default'], '/');
    v = typeof doc.version === 'number' ? doc.version : 2;
    defaults.set(key, v);
  }
  return v;
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
