// The check after install: containerd's own reading of the files (`config dump`) must show the
// envhook handler with its BinaryName, pod annotations and the runc options envhook copied;
// anything missing is named, and install puts every file back.
import { HANDLER } from '../layout.ts';
import { configDump, type ContainerdBinary } from './containerd-binary.ts';
import { CRI_V2, CRI_V3 } from './containerd-merge.ts';
import { EnvhookError } from '../../errors.ts';
import { tableAt, type Table } from '../toml.ts';

export interface HandlerExpectation {
  front: string;
  /** The runc options copied into the handler. */
  options: Table;
  /** The default runtime that must still be there (install's check; `envhook status` does not know it). */
  defaultName?: string;
}

/** A line for the admin when containerd agrees; throws with what is missing otherwise. */
export function checkContainerd(bin: ContainerdBinary, rootHost: string, rootArg: string, cwd: string, want: HandlerExpectation): string {
  const dump = configDump(bin, rootArg, cwd);
  const runtimes = tableAt(dump, 'plugins', bin.family === '1.x' ? CRI_V2 : CRI_V3, 'containerd', 'runtimes');
  const h = tableAt(runtimes, HANDLER);
  const problems: string[] = [];
  if (!h) problems.push(`no runtime handler "${HANDLER}"`);
  else {
    if (h.runtime_type !== 'io.containerd.runc.v2') problems.push(`runtime_type is not io.containerd.runc.v2`);
    if (!Array.isArray(h.pod_annotations) || !h.pod_annotations.includes('envhook.io/*'))
      problems.push('pod_annotations lacks "envhook.io/*"');
    const options = tableAt(h, 'options') ?? {};
    if (options.BinaryName !== want.front) problems.push(`options.BinaryName is not ${want.front}`);
    for (const [k, v] of Object.entries(want.options)) if (options[k] !== v) problems.push(`options.${k} is not ${JSON.stringify(v)}`);
  }
  if (want.defaultName !== undefined && !tableAt(runtimes, want.defaultName))
    problems.push(`the default runtime "${want.defaultName}" is gone`);
  if (problems.length) throw new EnvhookError(`containerd ${bin.version} config dump of ${rootHost}: ${problems.join('; ')}`);
  const copied = Object.keys(want.options);
  return `checked: containerd ${bin.version} config dump of ${rootHost} shows the runtime handler "${HANDLER}" with BinaryName ${want.front}${copied.length ? ` and ${copied.join(', ')} from "${want.defaultName}"` : ''}`;
}
