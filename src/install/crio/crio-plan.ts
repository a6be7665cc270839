// CRI-O: a crio.conf.d drop-in with the runtime handler `envhook` whose runtime_path is the
// front, and the createRuntime hooks.d file (ownership, and the check that env was applied).
// CRI-O copies pod annotations into the OCI spec itself; `allowed_annotations` only gates
// CRI-O's own experimental annotations (and is deprecated), so it is not set.
// Never a precreate file here: CRI-O rejects that stage and reads Podman's default directory.
import path from 'node:path';
import { HANDLER, HOOK_FILES, SHARED_HOOKS_DIR, type Layout } from '../layout.ts';
import { hookFile, runtimeClass, type HookTemplates, type RuntimePlan } from '../targets.ts';
import { parseToml } from '../toml.ts';
import { findNodeBinary, missingBinary } from '../../oci/runtime-binary.ts';
import { checkCrio } from './crio-check.ts';

/** The drop-in; `ociRuntime` (the `runtime` setting, a name or a path) is what the front execs: its state lives under /run/<name>. */
export function crioDropIn(layout: Layout, ociRuntime = 'runc'): string {
  const name = path.posix.basename(ociRuntime);
  return [
    '# Written by envhook install; removed by envhook uninstall.',
    `# The envhook runtime handler: ${name} behind envhook-runtime (select it with RuntimeClass "envhook").`,
    `[crio.runtime.runtimes.${HANDLER}]`,
    `runtime_path = ${JSON.stringify(layout.front)}`,
    'runtime_type = "oci"',
    `runtime_root = ${JSON.stringify(`/run/${name}`)}`,
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
}

export function crioPlan(layout: Layout, templates: HookTemplates, opts: CrioPlanOptions = {}): RuntimePlan {
  const { hooksDir = SHARED_HOOKS_DIR, crio } = opts;
  const dropIn = crioDropIn(layout, opts.ociRuntime);
  parseToml(dropIn, layout.config); // a path with odd characters must still make valid TOML
  const bin = findNodeBinary('crio', crio, layout.root);
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
      : { notes: [`not checked with CRI-O: ${missingBinary('crio', layout.root)} (--crio PATH names one)`] }),
  };
}
