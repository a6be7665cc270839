// The containerd binary, when there is one to ask: its line (1.x or 2.x, whose merge rules
// differ), the config version it writes by default (for a node with no config file yet), and
// `config dump`, its own reading of the files, which is the check after install. containerd
// answers these without a running daemon.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { EnvhookError } from '../../errors.ts';
import type { Family } from './containerd-files.ts';
import { parseToml, type Table } from '../toml.ts';
import { onPath, versionMatch } from '../which.ts';

export interface ContainerdBinary {
  path: string;
  /** As `containerd --version` prints it (2.1.9, 1.6.20~ds1). */
  version: string;
  family: Family;
}

/** `explicit` (--containerd), else `containerd` on PATH, else undefined. */
export function findContainerd(explicit: string | undefined): ContainerdBinary | undefined {
  const bin = explicit ? path.resolve(explicit) : onPath('containerd');
  if (!bin) return undefined;
  // `containerd <package> <version> <revision>`, as every containerd prints it: another program's
  // version line (`runc version 1.1.12`) is not taken for a containerd's.
  const m = versionMatch(bin, 'containerd', /^containerd\s+\S+\s+v?((\d+)\.(\d+)\.(\d+)\S*)/m);
  return { path: bin, version: m[1]!, family: Number(m[2]) >= 2 ? '2.x' : '1.x' };
}

const defaults = new Map<string, number>();

/** The config version `containerd config default` writes: what a new root file gets, the newest it reads. */
export function defaultConfigVersion(bin: ContainerdBinary): number {
  let v = defaults.get(bin.path);
  if (v === undefined) {
    const doc = run(bin, ['config', 'default'], '/');
    v = typeof doc.version === 'number' ? doc.version : 2;
    defaults.set(bin.path, v);
  }
  return v;
}

/**
 * `containerd --config FILE config dump`: the merged configuration. `cwd` stands for containerd's
 * working directory (/ under systemd), against which containerd 1.x expands relative patterns.
 */
export function configDump(bin: ContainerdBinary, realFile: string, cwd: string): Table {
  return run(bin, ['--config', realFile, 'config', 'dump'], cwd);
}

function run(bin: ContainerdBinary, args: string[], cwd: string): Table {
  const r = spawnSync(bin.path, args, { encoding: 'utf8', cwd, timeout: 60_000, maxBuffer: 16 << 20 });
  if (r.status !== 0) {
    // containerd's last line says what it could not read (a path, a TOML position)
    const last =
      (r.stderr ?? '')
        .trim()
        .split('\n')
        .at(-1)
        ?.replace(/^.*msg="?/, '')
        .slice(0, 300) || `exit ${r.status ?? r.signal}`;
    throw new EnvhookError(`containerd ${bin.version} (${bin.path} ${args.join(' ')}) failed: ${last}`);
  }
  return parseToml(r.stdout, `the output of ${bin.path} ${args.slice(-2).join(' ')}`);
}
