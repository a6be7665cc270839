// The check after a CRI-O install: `crio [--config FILE] --config-dir DIR config` prints the
// configuration CRI-O would run with (the options equal to CRI-O's defaults commented out: read
// by crio-render.ts); it must show the envhook handler running the front, and a hooks_dir that
// holds the directory the createRuntime file went to.
import fs from 'node:fs';
import path from 'node:path';
import { EnvhookError } from '../../errors.ts';
import { HANDLER, type Layout } from '../layout.ts';
import { tableAt, type Table } from '../toml.ts';
import { readCrioConfig } from './crio-render.ts';
import { CRIO_DROP_IN_DIR } from '../config-read.ts';
import {
  failureWords,
  findNodeBinary,
  missingBinary,
  pathFor,
  RuntimeReadFailed,
  runRuntimeBinary,
  versionMatch,
  type RuntimeBinary,
} from '../../oci/runtime-binary.ts';

export const CRIO_MAIN_CONFIG = '/etc/crio/crio.conf';
/** CRI-O's own directory: every CRI-O package makes it. */
const CRIO_ETC = '/etc/crio';

/** The version `bin --version` prints (crio version 1.34.0). */
function crioVersion(bin: RuntimeBinary): string {
  // urfave/cli's `crio version <version>` first: another program's version line is not taken for CRI-O's
  return versionMatch(bin, 'CRI-O', /^crio version v?(\d+\.\d+\.\d+)\S*/m)[1]!;
}

/**
 * `explicit` (--crio: a binary of this machine, run here), else the node's crio under `root`, with
 * its version (so one --crio names is CRI-O before anything is written); undefined when there is none.
 */
export function findCrio(explicit: string | undefined, root: string): (RuntimeBinary & { version: string }) | undefined {
  const bin = findNodeBinary('crio', explicit, root);
  return bin && { ...bin, version: crioVersion(bin) };
}

/**
 * The node's CRI-O for an install: findCrio, or, with no binary, its files (/etc/crio) alone; a
 * node with neither has no CRI-O to register with: refused, naming both and what to do.
 */
export function nodeCrio(explicit: string | undefined, layout: Layout): (RuntimeBinary & { version: string }) | undefined {
  const bin = findCrio(explicit, layout.root);
  if (bin || fs.existsSync(layout.real(CRIO_ETC))) return bin;
  const under = path.resolve(layout.root) === '/' ? '' : ' under --root';
  throw new EnvhookError(
    `CRI-O is not installed: ${missingBinary('crio', layout.root)}, and no ${CRIO_ETC}${under}: install CRI-O first (or name its binary with --crio PATH)`,
  );
}

/** The configuration CRI-O would run with, as `crio config` prints it (the drop-in's directory included), defaults included. */
export function crioConfigDump(bin: RuntimeBinary, layout: Layout): Table {
  const args: string[] = [];
  const at = (p: string) => pathFor(bin, layout.root, p);
  if (fs.existsSync(layout.real(CRIO_MAIN_CONFIG))) args.push('--config', at(CRIO_MAIN_CONFIG));
  args.push('--config-dir', at(CRIO_DROP_IN_DIR), 'config');
  const r = runRuntimeBinary(bin, args, { cwd: layout.root });
  // CRI-O's logrus line says which file it could not decode, and where
  if (r.status !== 0) throw new RuntimeReadFailed(`${bin.path} ${args.join(' ')} failed: ${failureWords(r)}`);
  return readCrioConfig(r.stdout, `the output of ${bin.path} config`);
}

export function checkCrio(bin: RuntimeBinary, layout: Layout, hooksDir: string): string {
  const runtime = tableAt(crioConfigDump(bin, layout), 'crio', 'runtime');
  const h = tableAt(runtime, 'runtimes', HANDLER);
  const problems: string[] = [];
  if (!h) problems.push(`no runtime handler "${HANDLER}"`);
  else if (h.runtime_path !== layout.front) problems.push(`runtime_path is not ${layout.front}`);
  const dirs = runtime?.hooks_dir;
  if (Array.isArray(dirs) && !dirs.includes(hooksDir))
    problems.push(`hooks_dir does not hold ${hooksDir} (install with --hooks-dir DIR naming one it holds)`);
  if (problems.length) throw new EnvhookError(`crio config: ${problems.join('; ')}`);
  return `checked: crio config shows the runtime handler "${HANDLER}" with runtime_path ${layout.front}`;
}
