// /etc/envhook/config.json written by install (--kubelet-root, --log-file, --log-level,
// --oci-runtime). This is where the front and envhook read their settings under every runtime:
// CRI-O's conmon runs the runtime with only monitor_env and PATH, containerd's shim with its own
// environment, and hooks.d hooks with only the env their file lists; a file read by path reaches
// all of them. Keys the file already has are kept; a reinstall without these flags keeps the file
// a previous install wrote.
import { EnvhookError, oneLine } from '../errors.ts';
import { LOG_LEVELS } from '../log.ts';
import { DEFAULT_CONFIG_FILE } from '../settings.ts';
import { validateSettingsFile } from '../schema.ts';
import type { Layout } from './layout.ts';
import { readHost, sha256 } from './fsops.ts';
import { recordedHash, type State } from './state.ts';
import type { Target } from './targets.ts';

export interface SettingsFlags {
  kubeletRoot?: string | undefined;
  logFile?: string | undefined;
  logLevel?: string | undefined;
  ociRuntime?: string | undefined;
}

export const SETTINGS_FILE = DEFAULT_CONFIG_FILE;

export function settingsTarget(layout: Layout, flags: SettingsFlags, state: State): Target | undefined {
  const given: Record<string, string> = {};
  if (flags.kubeletRoot !== undefined) given.kubeletRoot = hostPath(flags.kubeletRoot, '--kubelet-root');
  if (flags.logFile !== undefined) given.logFile = hostPath(flags.logFile, '--log-file');
  if (flags.logLevel !== undefined && !(LOG_LEVELS as readonly string[]).includes(flags.logLevel))
    throw new EnvhookError(`--log-level ${oneLine(flags.logLevel)}: not a log level: use one of ${LOG_LEVELS.join(', ')}`);
  if (flags.logLevel !== undefined) given.logLevel = flags.logLevel;
  if (flags.ociRuntime !== undefined) given.runtime = flags.ociRuntime;
  validateSettingsFile(given, 'install flags for ' + SETTINGS_FILE);
  const before = readHost(layout, SETTINGS_FILE);
  if (Object.keys(given).length === 0) {
    const ours = before !== undefined && recordedHash(state, SETTINGS_FILE).includes(sha256(before));
    return ours ? { file: SETTINGS_FILE, content: before, mode: 0o644 } : undefined;
  }
  let current: Record<string, unknown> = {};
  if (before !== undefined) {
    try {
      current = JSON.parse(before.toString('utf8'));
    } catch (cause) {
      throw new EnvhookError(`${SETTINGS_FILE} is not valid JSON: fix or remove it first`, { cause: new SyntaxError('JSON syntax error') });
    }
  }
  const next = { ...current, ...given };
  validateSettingsFile(next, SETTINGS_FILE);
  return { file: SETTINGS_FILE, content: Buffer.from(JSON.stringify(next, null, 2) + '\n'), mode: 0o644 };
}

function hostPath(p: string, flag: string): string {
  if (!p.startsWith('/')) throw new EnvhookError(`${flag} must be an absolute host path`);
  return p;
}
