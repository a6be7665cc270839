// The node as `envhook status` and `envhook doctor` see it under --root: the settings file (read
// once, its problem kept rather than thrown: a bad file is a finding, not the end of the report),
// the settings in force, the installs recorded in <prefix>/state.json, and the NRI status file.
import fs from 'node:fs';
import path from 'node:path';
import { EnvhookError, errnoReason } from '../errors.ts';
import { DEFAULT_CONFIG_FILE, loadSettings, parseSettingsFile, type AllSettings } from '../settings.ts';
import { absolute, makeLayout, RUNTIMES, type Layout, type Runtime } from '../install/layout.ts';
import { readState, type RuntimeRecord } from '../install/state.ts';
import { refuseBadRoot } from '../install/config-read.ts';
import { installKey } from '../install/mode.ts';
import { readStatus, statusPath, type NriStatus } from '../nri/status-file.ts';

export interface NodeOptions {
  root: string;
  prefix: string;
  runDir?: string | undefined;
  /** The runtimes' binaries to ask (--containerd, --crio: run on this machine); default the node's under the root. */
  containerd?: string | undefined;
  crio?: string | undefined;
}

export interface RecordedInstall {
  runtime: Runtime;
  mode: 'shim' | 'nri';
  record: RuntimeRecord;
}

export interface NodeView {
  root: string;
  /** The prefix's layout (its paths are the same for every runtime but `config`). */
  layout: Layout;
  /** The settings file, a host path (ENVHOOK_CONFIG's, as given, when set). */
  settingsFile: string;
  /** Its settings, or why it is not valid (`config file F:L:C: …`); neither when it does not exist. */
  fileSettings?: Partial<AllSettings>;
  settingsProblem?: string;
  /** In force: flags, environment, the file (when valid), defaults. */
  settings: AllSettings;
  installs: RecordedInstall[];
  binaries: { containerd?: string | undefined; crio?: string | undefined };
  /** Runtimes whose binary comes from the install's record (install was named it), not from a flag of this command. */
  recordedBinaries: Set<Runtime>;
  statusFile: string;
  status: NriStatus | undefined;
  real(hostPath: string): string;
}

export function readNode(opts: NodeOptions, env: NodeJS.ProcessEnv = process.env): NodeView {
  const root = path.resolve(opts.root);
  refuseBadRoot(root);
  const layout = makeLayout('containerd', { root, prefix: opts.prefix });
  const named = env.ENVHOOK_CONFIG;
  const settingsFile = named || DEFAULT_CONFIG_FILE;
  const realSettings = named ? named : layout.real(DEFAULT_CONFIG_FILE);
  const binaries = { containerd: opts.containerd, crio: opts.crio };
  const view: Partial<NodeView> = { root, layout, settingsFile, binaries, real: layout.real };
  let text: string | undefined;
  try {
    text = fs.readFileSync(realSettings, 'utf8');
  } catch (cause) {
    const code = (cause as NodeJS.ErrnoException).code;
    if (named || code !== 'ENOENT') view.settingsProblem = `cannot read config file ${settingsFile}: ${errnoReason(cause)}`;
  }
  if (text !== undefined) {
    try {
      view.fileSettings = parseSettingsFile(text, settingsFile);
    } catch (err) {
      if (!(err instanceof EnvhookError)) throw err;
      view.settingsProblem = err.message;
    }
  }
  const runDir = opts.runDir === undefined ? undefined : absolute(opts.runDir, '--run-dir');
  view.settings = loadSettings({ runDir }, env, view.fileSettings ?? {});
  const state = readState(layout);
  view.installs = RUNTIMES.flatMap((runtime) =>
    (['shim', 'nri'] as const).flatMap((mode) => {
      const record = state.runtimes[installKey(runtime, mode)];
      return record ? [{ runtime, mode, record }] : [];
    }),
  );
  // the binary install was named (--containerd, --crio), where this command names none
  view.recordedBinaries = new Set();
  for (const i of view.installs) {
    const key = i.runtime === 'containerd' ? 'containerd' : i.runtime === 'crio' ? 'crio' : undefined;
    if (!key || binaries[key] !== undefined || i.record.binary === undefined) continue;
    binaries[key] = i.record.binary;
    view.recordedBinaries.add(i.runtime);
  }
  view.statusFile = statusPath(view.settings.runDir!);
  view.status = readStatus(layout.real(view.settings.runDir!));
  return view as NodeView;
}
