// <prefix>/envhook-runtime.conf: what the sh front needs from install, as data it reads with
// `read`, never sources: the real runtime it execs. Resolved here once (the front then does no
// PATH search and reads no JSON): the `runtime` setting (--oci-runtime, else config.json's,
// else runc) as a path, or that name as the node finds it under --root (oci/runtime-binary.ts:
// PATH inside the root, then the usual directories), skipping any envhook front. A path must be
// absolute and is checked under --root the same way: missing, not executable or a front, it is
// refused before any write (the front would fail every container it starts). A name found
// nowhere stays a name: the front execs it from the runtime's PATH (a test root, a runtime only
// the container runtime's PATH has). The envhook executable is not in the file:
// the front runs the one beside it, so an installed tree works wherever it is seen from.
import { EnvhookError } from '../errors.ts';
import { findRuntimeBinary, runtimeFault, USUAL_DIRS, type RuntimeFault } from '../oci/runtime-binary.ts';
import type { Layout } from './layout.ts';
import type { Target } from './targets.ts';

export interface FrontConf {
  target: Target;
  /** Why the runtime stayed a name (printed with the plan). */
  note?: string;
}

/**
 * The data file for the `runtime` setting; `from` names where the setting came from in a refusal
 * (`--oci-runtime`, or config.json's `runtime`).
 */
export function frontConfTarget(layout: Layout, setting: string, from: string, envPath = process.env.PATH ?? ''): FrontConf {
  if (setting.includes('\n')) throw new EnvhookError('the runtime setting must be one line');
  if (setting.includes('/')) refuseRuntimePath(layout, setting, from);
  // the file holds an absolute path: relative PATH entries are not searched
  const found = setting.includes('/')
    ? setting
    : findRuntimeBinary(setting, { root: layout.root, envPath, usual: true, absoluteOnly: true })?.path;
  const text = [
    `runtime=${found ?? setting}`,
    `# Written by envhook install: the real runtime ${layout.front} execs (ENVHOOK_RUNTIME`,
    '# overrides it). Read line by line, never run; envhook install --oci-runtime changes it.',
    '',
  ].join('\n');
  const under = layout.root === '/' ? '' : ' under --root'; // not the path: an installer in a pod (--root /host) prints what one on the host prints
  const note = found
    ? undefined
    : `runtime "${setting}" not found on PATH${under}, nor in ${USUAL_DIRS.join(', ')}: the front looks it up on the container runtime's PATH`;
  return { target: { file: layout.conf, content: Buffer.from(text), mode: 0o644 }, ...(note ? { note } : {}) };
}

const FAULT: Record<RuntimeFault, string> = {
  missing: 'no such file',
  'not executable': 'not an executable file',
  front: 'an envhook front, not a real runtime',
};

/** A path the front would exec: absolute, and under --root an executable file that is not a front. */
function refuseRuntimePath(layout: Layout, file: string, from: string): void {
  const todo = "name the OCI runtime's executable (e.g. --oci-runtime /usr/sbin/runc) or its name to look up on PATH";
  if (!file.startsWith('/')) throw new EnvhookError(`${from} ${file}: a relative path: ${todo}`);
  const fault = runtimeFault(layout.real(file));
  const under = layout.root === '/' ? '' : ' under --root';
  if (fault) throw new EnvhookError(`${from} ${file}: ${FAULT[fault]}${fault === 'front' ? '' : under}: ${todo}`);
}

/** The `runtime` of config.json's text (undefined when absent or not JSON: install validates it elsewhere). */
export function runtimeSetting(settingsText: Buffer | undefined): string | undefined {
  if (!settingsText) return undefined;
  try {
    const runtime = (JSON.parse(settingsText.toString('utf8')) as { runtime?: unknown }).runtime;
    return typeof runtime === 'string' && runtime !== '' ? runtime : undefined;
  } catch {
    return undefined;
  }
}
