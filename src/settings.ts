// Settings: flag, then environment, then JSON config file (/etc/envhook/config.json or
// $ENVHOOK_CONFIG), then default (docs/design.md#settings). The runtime shim passes no flags.
import fs from 'node:fs';
import { EnvhookError, errnoReason, SchemaError } from './errors.ts';
import { jsonKeyAt, jsonSyntaxErrorAt } from './oci/json-position.ts';
import { validateSettingsFile } from './schema.ts';
import type { LogLevel } from './log.ts';

export interface Settings {
  kubeletRoot: string;
  runtime: string;
  logFile: string | undefined;
  logLevel: LogLevel;
  /** Where the shim records owners for `envhook watch` (src/watch/run-dir.ts); always set by loadSettings. */
  runDir?: string;
  /** A run directory not in memory (watch/run-dir-memory.ts): refused, or used with a warning; always set by loadSettings. */
  runDirOnDisk?: RunDirOnDisk;
  /** envhook's log files and status file 0640 with this group (a name or GID: fs/file-group.ts), instead of 0600. */
  fileGroup?: string | undefined;
  /** The budgets of owned copies (mirror/budget.ts): one pod's bytes, files, volumes; always set by loadSettings. */
  podCopyBytes?: number;
  podCopyFiles?: number;
  podCopyVolumes?: number;
  /** The node's copies' bytes; undefined: a quarter of the run directory's file system, at most 256 MiB. */
  nodeCopyBytes?: number | undefined;
}

export type RunDirOnDisk = 'refuse' | 'warn';

/** The settings only `envhook nri` reads, kept apart so the pipeline's Settings stay as they are. */
export interface NriSettings {
  /** The runtime's NRI socket. */
  nriSocket: string;
  /** The plugin index NRI orders plugins by: two digits. */
  nriIndex: string;
  /** host:port of the metrics and health endpoint (src/nri/supervisor/http.ts); off when undefined. */
  metricsAddress: string | undefined;
  /** The runtime's CRI socket, for evictions; undefined: the registered runtime's own (nri/wire/cri-client.ts). */
  criSocket: string | undefined;
  /** Evict every container created while envhook was away, not only those of pods that ask. */
  evictUnapplied: boolean;
  /** The worker under SCHED_FIFO at this priority (1-99; nri/realtime.ts); undefined: ordinary. */
  fifoPriority: number | undefined;
  /** At SIGTERM, seconds to go on serving until another envhook nri has taken over (nri/supervisor/handover.ts). */
  handoverWait: number;
}

export type AllSettings = Settings & NriSettings;
export type SettingFlags = Partial<AllSettings>;

export const DEFAULT_CONFIG_FILE = '/etc/envhook/config.json';
const ENV_NAMES: Record<keyof AllSettings, string> = {
  kubeletRoot: 'ENVHOOK_KUBELET_ROOT',
  runtime: 'ENVHOOK_RUNTIME',
  logFile: 'ENVHOOK_LOG_FILE',
  logLevel: 'ENVHOOK_LOG_LEVEL',
  runDir: 'ENVHOOK_RUN_DIR',
  runDirOnDisk: 'ENVHOOK_RUN_DIR_ON_DISK',
  fileGroup: 'ENVHOOK_FILE_GROUP',
  podCopyBytes: 'ENVHOOK_POD_COPY_BYTES',
  podCopyFiles: 'ENVHOOK_POD_COPY_FILES',
  podCopyVolumes: 'ENVHOOK_POD_COPY_VOLUMES',
  nodeCopyBytes: 'ENVHOOK_NODE_COPY_BYTES',
  nriSocket: 'ENVHOOK_NRI_SOCKET',
  nriIndex: 'ENVHOOK_NRI_INDEX',
  metricsAddress: 'ENVHOOK_METRICS_ADDRESS',
  criSocket: 'ENVHOOK_CRI_SOCKET',
  evictUnapplied: 'ENVHOOK_EVICT_UNAPPLIED',
  fifoPriority: 'ENVHOOK_FIFO_PRIORITY',
  handoverWait: 'ENVHOOK_HANDOVER_WAIT',
};
const DEFAULTS: AllSettings = {
  kubeletRoot: '/var/lib/kubelet',
  runtime: 'runc',
  logFile: undefined,
  logLevel: 'info',
  runDir: '/run/envhook',
  runDirOnDisk: 'warn',
  fileGroup: undefined,
  // Why these: docs/ownership.md#budgets (mirror/budget.ts keeps the same figures).
  podCopyBytes: 32 * 1024 * 1024,
  podCopyFiles: 8192,
  podCopyVolumes: 32,
  nodeCopyBytes: undefined,
  nriSocket: '/var/run/nri/nri.sock',
  nriIndex: '50',
  metricsAddress: undefined,
  criSocket: undefined,
  evictUnapplied: false,
  fifoPriority: undefined,
  handoverWait: 0,
};

/** A boolean setting from the environment: `true` or `false`, as in the config file. */
function envBoolean(text: string, name: string): boolean {
  if (text === 'true' || text === 'false') return text === 'true';
  throw new EnvhookError(`${name}: must be true or false`);
}

/** `fileSettings`: the config file's settings already read (a node's file under --root), instead of reading it here. */
export function loadSettings(
  flags: SettingFlags = {},
  env: NodeJS.ProcessEnv = process.env,
  fileSettings?: Partial<AllSettings>,
): AllSettings {
  const file = fileSettings ?? readConfigFile(env);
  const fromEnv: Partial<Record<keyof AllSettings, string | boolean>> = {};
  for (const key of Object.keys(ENV_NAMES) as (keyof AllSettings)[]) {
    const v = env[ENV_NAMES[key]];
    if (v !== undefined && v !== '') fromEnv[key] = key === 'evictUnapplied' ? envBoolean(v, ENV_NAMES[key]) : v;
  }
  if (fromEnv.fifoPriority !== undefined) fromEnv.fifoPriority = fifoNumber(String(fromEnv.fifoPriority), ENV_NAMES.fifoPriority) as never;
  if (fromEnv.handoverWait !== undefined) fromEnv.handoverWait = waitSeconds(String(fromEnv.handoverWait), ENV_NAMES.handoverWait) as never;
  for (const key of BUDGETS) if (fromEnv[key] !== undefined) fromEnv[key] = budgetNumber(String(fromEnv[key]), ENV_NAMES[key]) as never;
  // Values that the schema constrains are checked wherever they come from.
  for (const key of ['logLevel', 'runDirOnDisk', 'nriIndex', 'metricsAddress'] as const) {
    if (fromEnv[key] !== undefined) checkValue(key, fromEnv[key], ENV_NAMES[key]);
  }
  const pick = <K extends keyof AllSettings>(k: K): AllSettings[K] =>
    (flags[k] ?? (fromEnv[k] as AllSettings[K] | undefined) ?? (file[k] as AllSettings[K] | undefined) ?? DEFAULTS[k]) as AllSettings[K];
  if (flags.logLevel !== undefined) checkValue('logLevel', flags.logLevel, '--log-level');
  if (flags.runDirOnDisk !== undefined) checkValue('runDirOnDisk', flags.runDirOnDisk, '--run-dir-on-disk');
  if (flags.nriIndex !== undefined) checkValue('nriIndex', flags.nriIndex, '--index');
  if (flags.metricsAddress !== undefined) checkValue('metricsAddress', flags.metricsAddress, '--metrics-address');
  if (flags.fifoPriority !== undefined) checkValue('fifoPriority', flags.fifoPriority, '--fifo-priority');
  if (flags.handoverWait !== undefined) checkValue('handoverWait', flags.handoverWait, '--handover-wait');
  for (const key of BUDGETS) if (flags[key] !== undefined) checkValue(key, flags[key], BUDGET_FLAGS[key]);
  return {
    kubeletRoot: pick('kubeletRoot'),
    runtime: pick('runtime'),
    logFile: pick('logFile'),
    logLevel: pick('logLevel'),
    runDir: pick('runDir'),
    runDirOnDisk: pick('runDirOnDisk'),
    fileGroup: pick('fileGroup'),
    podCopyBytes: pick('podCopyBytes'),
    podCopyFiles: pick('podCopyFiles'),
    podCopyVolumes: pick('podCopyVolumes'),
    nodeCopyBytes: pick('nodeCopyBytes'),
    nriSocket: pick('nriSocket'),
    nriIndex: pick('nriIndex'),
    metricsAddress: pick('metricsAddress'),
    criSocket: pick('criSocket'),
    evictUnapplied: pick('evictUnapplied'),
    fifoPriority: pick('fifoPriority'),
    handoverWait: pick('handoverWait'),
  };
}

/**
 * A flag's or variable's value checked by the config file's schema: `NAME "value": reason`, the
 * reason in words (schema.ts), no JSON path (there is no file to point into).
 */
function checkValue(key: keyof AllSettings, value: unknown, name: string): void {
  try {
    validateSettingsFile({ [key]: value }, name);
  } catch (err) {
    if (!(err instanceof SchemaError)) throw err;
    const text = String(value);
    throw new EnvhookError(`${name} ${JSON.stringify(text.length > 100 ? text.slice(0, 100) + '…' : text)}: ${err.reason}`);
  }
}

const BUDGETS = ['podCopyBytes', 'podCopyFiles', 'podCopyVolumes', 'nodeCopyBytes'] as const;
/** The budgets' flags (`envhook nri`, `envhook watch`: cli/options.ts). */
export const BUDGET_FLAGS: Record<(typeof BUDGETS)[number], string> = {
  podCopyBytes: '--pod-copy-bytes',
  podCopyFiles: '--pod-copy-files',
  podCopyVolumes: '--pod-copy-volumes',
  nodeCopyBytes: '--node-copy-bytes',
};

/** A budget from the environment or a flag: a whole number, at least 1 (the file's is checked by its schema). */
export function budgetNumber(text: string, name: string): number {
  const n = /^[0-9]{1,15}$/.test(text) ? Number(text) : 0;
  if (n < 1) throw new EnvhookError(`${name} ${JSON.stringify(text.slice(0, 100))}: must be a whole number, at least 1`);
  return n;
}

/** A priority from the environment or a flag: 1 to 99, written as an integer (the file's is checked by its schema). */
export function fifoNumber(text: string, name: string): number {
  const n = /^[0-9]{1,2}$/.test(text) ? Number(text) : 0;
  if (n < 1) throw new EnvhookError(`${name}: must be a SCHED_FIFO priority, 1 to 99`);
  return n;
}

/** Seconds from the environment or a flag: 0 to 300, written as an integer (the file's is checked by its schema). */
export function waitSeconds(text: string, name: string): number {
  const n = /^[0-9]{1,3}$/.test(text) ? Number(text) : -1;
  if (n < 0 || n > 300) throw new EnvhookError(`${name} ${JSON.stringify(text.slice(0, 100))}: must be whole seconds, 0 to 300`);
  return n;
}

function readConfigFile(env: NodeJS.ProcessEnv): Partial<AllSettings> {
  const named = env.ENVHOOK_CONFIG;
  const file = named || DEFAULT_CONFIG_FILE;
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (cause) {
    if (!named && (cause as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new EnvhookError(`cannot read config file ${file}: ${errnoReason(cause)}`, { cause });
  }
  return parseSettingsFile(text, file);
}

/**
 * The settings in a config file's text; an error names `file:line:column` (of the syntax error,
 * or of the key whose value is wrong), never the text. `envhook status` and `doctor` check the
 * node's file with it, as every command reads it.
 */
export function parseSettingsFile(text: string, file: string): Partial<AllSettings> {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    const at = jsonSyntaxErrorAt(text) ?? { line: 1, column: 1 };
    throw new EnvhookError(`config file ${file}:${at.line}:${at.column}: not valid JSON`, { cause: new SyntaxError('JSON syntax error') });
  }
  try {
    validateSettingsFile(data, `config file ${file}`);
  } catch (err) {
    if (!(err instanceof SchemaError)) throw err;
    // the key whose value is wrong, or the unknown key itself
    const key =
      /^\/([^/]+)/.exec(err.at)?.[1]?.replace(/~1/g, '/').replace(/~0/g, '~') ?? /^unknown field "([^"\\]*)"$/.exec(err.reason)?.[1];
    const at = (key === undefined ? undefined : jsonKeyAt(text, key)) ?? { line: 1, column: 1 };
    throw new SchemaError(`config file ${file}:${at.line}:${at.column}`, err.at, err.reason);
  }
  return data as Partial<AllSettings>;
}
