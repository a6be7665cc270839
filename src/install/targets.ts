// What a runtime's install wants on disk: files envhook owns (written whole) and admin files
// it appends a delimited block to. Generated here, so paths follow --prefix.
import { EnvhookError } from '../errors.ts';
import type { Layout } from './layout.ts';
import { HANDLER } from './layout.ts';
import type { KeyEdit } from './key-edit.ts';

export interface Target {
  file: string;
  content: Buffer;
  mode: number;
}

export interface BlockTarget {
  file: string;
  /** The block's body (between BEGIN and END). */
  body: string;
  mode: number;
  /** Why the block goes into this file (printed with the change). */
  note?: string;
}

export interface RuntimePlan {
  /** Files envhook owns, in install order (executables before the hooks.d files naming them). */
  files: Target[];
  blocks: BlockTarget[];
  /** Keys of admin files changed in place (--enable-nri). */
  edits?: KeyEdit[];
  /** What the admin does next (restart the runtime, apply the RuntimeClass). */
  next: string[];
  /** Lines for the admin about how the plan was made (config version, checks skipped). */
  notes?: string[];
  /** The runtime's own reading after the files are written: a line, or throws with what is missing. */
  verify?: () => string;
  /**
   * A pre-installed NRI plugin the running one can be upgraded to without a runtime restart
   * (nri/supervisor/upgrade.ts): its socket (external connections allowed), and the runtime's
   * own files of the plan, whose change still needs the restart.
   */
  upgrade?: { socket: string; configFiles: string[] };
}

/** hooks.d annotation keys are regexes matched unanchored: anchor ours. */
export const HOOK_ANNOTATION = '^envhook\\.io/';

export type Stage = 'precreate' | 'createRuntime';
export type HookTemplates = Partial<Record<Stage, Buffer>>;

/**
 * The hooks.d file for `stage`: the source's template (hooks/envhook-<stage>.json) with
 * hook.path set to the installed executable, or the built-in one when the source has none.
 */
export function hookFile(layout: Layout, stage: Stage, template?: Buffer): Buffer {
  let hook: Record<string, any> = {
    version: '1.0.0',
    hook: { path: layout.bin, args: ['envhook', stage === 'precreate' ? 'precreate' : 'hook'] },
    when: { annotations: { [HOOK_ANNOTATION]: '.*' } },
    stages: [stage],
  };
  if (template) {
    try {
      hook = JSON.parse(template.toString('utf8'));
    } catch (cause) {
      throw new EnvhookError(`hooks.d template for ${stage} is not valid JSON`, { cause: new Error('JSON syntax error') });
    }
    const anchored = Object.keys(hook.when?.annotations ?? {}).every((k) => k.startsWith('^'));
    if (typeof hook.hook?.path !== 'string' || JSON.stringify(hook.stages) !== JSON.stringify([stage]) || !anchored) {
      throw new EnvhookError(`hooks.d template for ${stage}: needs hook.path, stages ["${stage}"] and anchored annotation regexes`);
    }
    hook.hook.path = layout.bin;
  }
  return Buffer.from(JSON.stringify(hook, null, 2) + '\n');
}

export function runtimeClass(): Buffer {
  return Buffer.from(
    [
      '# RuntimeClass for the envhook runtime handler (written by envhook install).',
      '# kubectl apply -f this file, then set `runtimeClassName: envhook` in a pod spec.',
      'apiVersion: node.k8s.io/v1',
      'kind: RuntimeClass',
      'metadata:',
      `  name: ${HANDLER}`,
      `handler: ${HANDLER}`,
      '',
    ].join('\n'),
  );
}
