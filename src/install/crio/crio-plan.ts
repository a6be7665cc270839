// CRI-O: a crio.conf.d drop-in with the runtime handler `envhook` whose runtime_path is the
// front, and the createRuntime hooks.d file (ownership, and the check that env was applied).
// CRI-O copies pod annotations into the OCI spec itself; `allowed_annotations` only gates
// CRI-O's own experimental annotations (and is deprecated), so it is not set.
// Never a precreate file here: CRI-O rejects that stage and reads Podman's default directory.
import path from 'node:path';
import { absolute, HANDLER, HOOK_FILES, SHARED_HOOKS_DIR, type Layout } from '../layout.ts';
import { EnvhookError } from '../../errors.ts';
import { readCrioFiles } from './crio-files.ts';
import { hookFile, runtimeClass, type HookTemplates, type RuntimePlan } from '../targets.ts';
import { parseToml, tableAt } from '../toml.ts';
import { missingBinary } from '../../oci/runtime-binary.ts';
import { checkCrio, nodeCrio } from './crio-check.ts';

/**
 * The drop-in; `ociRuntime` (the `runtime` setting, a name or a path) is what the front execs: its
 * state lives in `runtimeRoot` (CRI-O's default runtime's), else under /run/<name>.
 */
export function crioDropIn(layout: Layout, ociRuntime = 'runc', runtimeRoot?: string): string {
  const name = path.posix.basename(ociRuntime);
  return [
    '# Written by envhook install; removed by envhook uninstall.',
    `# The envhook runtime handler: ${name} behind envhook-runtime (select it with RuntimeClass "envhook").`,
    `[crio.runtime.runtimes.${HANDLER}]`,
    `runtime_path = ${JSON.stringify(layout.front)}`,
    'runtime_type = "oci"',
    `runtime_root = ${JSON.stringify(runtimeRoot ?? `/run/${name}`)}`,
    '',
  ].join('\n');
}

export interface CrioPlanOptions {
  /** The hooks directory CRI-O reads (default /usr/share/containers/oci/hooks.d). */
  hooksDir?: string | undefined;
  /** A crio binary of this machine to ask (default: the node's). */
  crio?: string | undefined;
  /** The real OCI runtime the front execs (default runc). */
  ociRuntime?: string | undefined;
  /** Its state directory, CRI-O's default runtime's runtime_root (default /run/<name>). */
  runtimeRoot?: string | undefined;
}

export function crioPlan(layout: Layout, templates: HookTemplates, opts: CrioPlanOptions = {}): RuntimePlan {
  if (opts.hooksDir !== undefined) opts = { ...opts, hooksDir: absolute(opts.hooksDir, '--hooks-dir') };
  const dropIn = crioDropIn(layout, opts.ociRuntime, opts.runtimeRoot);
  parseToml(dropIn, layout.config); // a path with odd characters must still make valid TOML
  const bin = nodeCrio(opts.crio, layout);
  // no crio to ask: its files, read as CRI-O reads them, give the hooks directory and must parse
  const fromFiles = bin ? undefined : hooksDirFromFiles(layout, opts.hooksDir);
  const hooksDir = fromFiles?.dir ?? opts.hooksDir ?? SHARED_HOOKS_DIR;
  return {
    files: [
      {
        file: path.posix.join(hooksDir, HOOK_FILES.createRuntime),
        content: hookFile(layout, 'createRuntime', templates.createRuntime),
        mode: 0o644,
      },
      { file: layout.config, content: Buffer.from(dropIn), mode: 0o644 },
      { file: layout.runtimeClass, content: runtimeClass(), mode: 0o644 },
    ],
    blocks: [],
    // a reload (SIGHUP) re-reads only some options: CRI-O logs "Updating runtime configuration"
    // and RunPodSandbox still fails with "failed to find runtime handler envhook"
    next: [
      `restart CRI-O to load the handler: systemctl restart crio (not reload: a reload does not register a new runtime handler)`,
      `kubectl apply -f ${layout.runtimeClass}`,
    ],
    ...(bin
      ? { verify: () => checkCrio(bin, layout, hooksDir) }
      : { notes: [`not checked with CRI-O: ${missingBinary('crio', layout.root)} (--crio PATH names one); ${fromFiles!.note}`] }),
  };
}

/**
 * The hooks directory as CRI-O's files set it: the last file that sets `hooks_dir` of
 * [crio.runtime] replaces the list; CRI-O reads hooks from every entry, the first being where a
 * new file goes (`--hooks-dir` must be one of them). What was read is said:
 * no `crio config` ran.
 */
function hooksDirFromFiles(layout: Layout, given: string | undefined): { dir: string; note: string } {
  let dirs: string[] | undefined;
  let from = '';
  for (const { file, doc } of readCrioFiles(layout)) {
    const h = tableAt(doc, 'crio', 'runtime')?.hooks_dir;
    if (h === undefined) continue;
    if (!Array.isArray(h) || h.length === 0 || !h.every((d) => typeof d === 'string'))
      throw new EnvhookError(`${file}: hooks_dir of [crio.runtime] is not a list of directories: CRI-O would read no hooks from it`);
    [dirs, from] = [h, file];
  }
  const read = 'read from its files instead (crio.conf, crio.conf.d), not crio config';
  if (!dirs) return { dir: given ?? SHARED_HOOKS_DIR, note: `${read}: no hooks_dir set, CRI-O's default ${SHARED_HOOKS_DIR}` };
  if (given !== undefined && !dirs.includes(given))
    throw new EnvhookError(
      `--hooks-dir ${given}: hooks_dir in ${from} (${dirs.join(', ')}) does not hold it: name one it holds, or leave --hooks-dir out`,
    );
  const dir = absolute(given ?? dirs[0]!, `hooks_dir in ${from}`);
  return { dir, note: `${read}: hooks_dir ${dirs.join(', ')} from ${from}: the createRuntime file goes to ${dir}` };
}
