// What a runtime's install wants on disk: files envhook owns (written whole) and admin files
// it appends a delimited block to. Generated here, so paths follow --prefix.
import path from 'node:path';
import type { Layout } from './layout.ts';
import { HANDLER } from './layout.ts';

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
}

export interface RuntimePlan {
  /** Files envhook owns, in install order (executables before the hooks.d files naming them). */
  files: Target[];
  blocks: BlockTarget[];
  /** What the admin does next (restart the runtime, apply the RuntimeClass). */
  next: string[];
}

/** hooks.d annotation keys are regexes matched unanchored: anchor ours. */
export const HOOK_ANNOTATION = '^envhook\\.io/';

export function hookFile(layout: Layout, stage: 'precreate' | 'createRuntime'): Buffer {
  const hook = {
    version: '1.0.0',
    hook: { path: layout.bin, args: ['envhook', stage === 'precreate' ? 'precreate' : 'hook'] },
    when: { annotations: { [HOOK_ANNOTATION]: '.*' } },
    stages: [stage],
  };
  return Buffer.from(JSON.stringify(hook, null, 2) + '\n');
}

export function hookPath(dir: string, name: string): string {
  return path.posix.join(dir, name);
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
