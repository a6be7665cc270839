// Settings: flag, then environment, then JSON config file (/etc/envhook/config.json or
// $ENVHOOK_CONFIG), then default (SPEC §7). The runtime shim passes no flags.
import fs from 'node:fs';
import { EnvhookError } from './errors.ts';
import { validateSettingsFile } from './schema.ts';
import type { LogLevel } from './log.ts';

export interface Settings {
  kubeletRoot: string;
  runtime: string;
  logFile: string | undefined;
  logLevel: LogLevel;
  /** Where the shim records owners for `envhook watch` (src/watch/run-dir.ts); always set by loadSettings. */
  runDir?: string;
}

export type SettingFlags = Partial<Settings>;

export const DEFAULT_CONFIG_FILE = '/etc/envhook/config.json';
const ENV_NAMES: Record<keyof Settings, string> = {
  kubeletRoot: 'ENVHOOK_KUBELET_ROOT',
  runtime: 'ENVHOOK_RUNTIME',
  logFile: 'ENVHOOK_LOG_FILE',
  logLevel: 'ENVHOOK_LOG_LEVEL',
  runDir: 'ENVHOOK_RUN_DIR',
};
const DEFAULTS: Settings = { kubeletRoot: '/var/lib/kubelet', runtime: 'runc', logFile: undefined, logLevel: 'info', runDir: '/run/envhook' };

export function loadSettings(flags: SettingFlags = {}, env: NodeJS.ProcessEnv = process.env): Settings {
  const file = readConfigFile(env);
  const fromEnv: Partial<Record<keyof Settings, string>> = {};
  for (const key of Object.keys(ENV_NAMES) as (keyof Settings)[]) {
    const v = env[ENV_NAMES[key]];
    if (v !== undefined && v !== '') fromEnv[key] = v;
  }
  if (fromEnv.logLevel !== undefined) validateSettingsFile({ logLevel: fromEnv.logLevel }, ENV_NAMES.logLevel);
  const pick = <K extends keyof Settings>(k: K): Settings[K] =>
    (flags[k] ?? (fromEnv[k] as Settings[K] | undefined) ?? (file[k] as Settings[K] | undefined) ?? DEFAULTS[k]) as Settings[K];
  if (flags.logLevel !== undefined) validateSettingsFile({ logLevel: flags.logLevel }, '--log-level');
  return { kubeletRoot: pick('kubeletRoot'), runtime: pick('runtime'), logFile: pick('logFile'), logLevel: pick('logLevel'), runDir: pick('runDir') };
}

function readConfigFile(env: NodeJS.ProcessEnv): Partial<Settings> {
  const named = env.ENVHOOK_CONFIG;
  const file = named || DEFAULT_CONFIG_FILE;
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (cause) {
    if (!named && (cause as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new EnvhookError(`cannot read config file ${file}: ${(cause as NodeJS.ErrnoException).code ?? 'error'}`, { cause });
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (cause) {
    throw new EnvhookError(`config file ${file} is not valid JSON`, { cause: new SyntaxError('JSON syntax error') });
  }
  validateSettingsFile(data, `config file ${file}`);
  return data as Partial<Settings>;
}
