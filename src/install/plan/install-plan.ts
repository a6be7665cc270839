// install and uninstall as plans: a list of file changes computed from the disk and the state
// file, applied in order (executables, hooks.d files, configs, state) or printed (--dry-run).
import fs from 'node:fs';
import path from 'node:path';
import { makeLayout, type Layout, type Runtime } from '../layout.ts';
import { createdDirs, deepestFirst, readHost, sha256, type Change } from '../fsops.ts';
import { markedFiles, ownedByOther, readState, recordedHash, stateChange, type RuntimeRecord, type State } from '../state.ts';
import { adminFileChange } from '../admin-file.ts';
import { removeFile } from '../remove-file.ts';
import { executableTargets, hookTemplates } from '../artifacts.ts';
import type { SourceOptions } from '../source.ts';
import type { RuntimePlan } from '../targets.ts';
import { containerdPlan, type ContainerdOptions } from '../containerd/containerd-plan.ts';
import { crioPlan } from '../crio/crio-plan.ts';
import { crioDefaultRuntime } from '../crio/crio-default-runtime.ts';
import { nodeCrio } from '../crio/crio-check.ts';
import { podmanPlan } from '../podman/podman-plan.ts';
import { SETTINGS_FILE, settingsTarget, type SettingsFlags } from '../settings-file.ts';
import { frontConfTarget, runtimeSetting } from '../front-conf.ts';
import { containerdNriPlan } from '../containerd/containerd-nri.ts';
import { checkPluginFlags, nriIndex, type PluginFlags } from '../nri-plugin.ts';
import { absolute } from '../layout.ts';
import { CRIO_NRI_DROP_IN, crioNriPlan } from '../crio/crio-nri.ts';
import { installKey, type InstallMode } from '../mode.ts';
import { EnvhookError } from '../../errors.ts';
import { refuseBadRoot, refuseUnreadConfig } from '../config-read.ts';
import { takeOver } from '../claim.ts';
import { WATCH_START, watchUnitTarget } from '../watch-unit.ts';

export interface InstallOptions extends SourceOptions, ContainerdOptions, SettingsFlags {
  runtime: Runtime;
  root?: string | undefined;
  prefix?: string | undefined;
  config?: string | undefined;
  /** CRI-O only: the hooks directory CRI-O reads (default /usr/share/containers/oci/hooks.d). */
  hooksDir?: string | undefined;
  /** CRI-O only: the crio binary for the check after install (default: crio on PATH). */
  crio?: string | undefined;
  /** shim (the runtime handler, default) or nri (the resident plugin). */
  mode?: InstallMode | undefined;
  /** nri: the plugin's two-digit index. */
  index?: string | undefined;
  /** nri: make envhook a required plugin of NRI's default validator. */
  nriRequired?: boolean | undefined;
  /** nri, containerd: change an admin's `disable = true` in NRI's table to false. */
  enableNri?: boolean | undefined;
  /** nri: the file the pre-installed plugin's stderr goes to. */
  nriLog?: string | undefined;
  /** nri: the plugin runs elsewhere (a DaemonSet): NRI switched on in the runtime's configuration, no plugin file. */
  externalPlugin?: boolean | undefined;
  /** containerd: --config is the file its service starts it with (containerd --config FILE). */
  serviceConfig?: boolean | undefined;
  /** Take the runtime's registration over from an install under another prefix (claim.ts). */
  takeOver?: boolean | undefined;
  /** nri: the plugin's settings, written into its wrapper (--cri-socket, --evict-unapplied, --metrics-address). */
  criSocket?: string | undefined;
  evictUnapplied?: boolean | undefined;
  metricsAddress?: string | undefined;
  /** shim, containerd or CRI-O: false writes no systemd unit for envhook watch (--no-watch-unit). */
  watchUnit?: boolean | undefined;
}

export interface Plan {
  layout: Layout;
  changes: Change[];
  next: string[];
  notes: string[];
  /** The runtime's own reading of the written files (install only). */
  verify?: (() => string) | undefined;
  /** Uninstall: directories install created, deepest first, removed when empty. */
  dirs?: string[] | undefined;
  /** What to say instead of "nothing changed: …" when nothing changes. */
  nothing?: string | undefined;
  /** Uninstall of the NRI plugin: the NRI sockets whose running envhook nri is asked to stop. */
  stopPlugins?: string[] | undefined;
  /** Install of the pre-installed NRI plugin: the running one may be upgraded without a runtime restart (targets.ts). */
  upgrade?: { socket: string; configFiles: string[] } | undefined;
}

export function planInstall(opts: InstallOptions): Plan {
  const layout = makeLayout(opts.runtime, nriDefaults(opts));
  refuseBadRoot(layout.root);
  refuseUnreadConfig(layout, opts.runtime, opts.serviceConfig);
  const plugin = refuseMisplacedFlags(opts); // a flag's fault before the node's
  const key = installKey(opts.runtime, opts.mode);
  const state = readState(layout);
  const stateBefore = readHost(layout, layout.state);
  // the settings before the registration that makes the runtime run the front
  const settings = settingsTarget(layout, opts, state);
  const oci = ociRuntimeOf(layout, opts, runtimeSetting(settings?.content ?? readHost(layout, SETTINGS_FILE)));
  // the runtime front (envhook-runtime and its data file) runs only under the runtime handler
  const conf = opts.mode === 'nri' ? undefined : frontConfTarget(layout, oci.runtime, oci.from);
  const rp = runtimePlan(layout, opts, state.runtimes[key], oci, plugin);
  const took = takeOver(layout, opts.runtime, key, rp, !!opts.takeOver);
  // the runtime handler's nodes need envhook watch for volume owners (the NRI plugin watches itself)
  const unit = opts.watchUnit !== false && opts.mode !== 'nri' && opts.runtime !== 'podman' ? watchUnitTarget(layout) : undefined;
  const files = [...executableTargets(layout, opts, conf?.target), ...(settings ? [settings] : []), ...rp.files, ...(unit ? [unit] : [])];
  const changes: Change[] = files.map((t): Change => {
    const before = readHost(layout, t.file);
    // an existing file that envhook did not write (or that was edited since) is the admin's
    // (a file of an install taken over is envhook's too: nothing to back up)
    const known = [...recordedHash(state, t.file), took?.hashes[t.file]];
    const foreign = before !== undefined && !before.equals(t.content) && !known.includes(sha256(before));
    return {
      file: t.file,
      before,
      after: t.content,
      mode: t.mode,
      backup: foreign,
      ...(foreign ? { note: 'this file was not written by envhook' } : {}),
    };
  });
  const prev = state.runtimes[key];
  const others = Object.entries(state.runtimes).flatMap(([k, rec]) => (k !== key && rec ? [rec] : []));
  for (const b of rp.blocks) {
    // one envhook block a file: another install's block there would be overwritten
    const other = Object.entries(state.runtimes).find(([k, rec]) => k !== key && rec?.blocks.includes(b.file));
    if (other) throw new EnvhookError(`${b.file} carries the envhook block of the ${other[0]} install: name another file with --drop-in`);
  }
  // admin files: this install's block and edited keys in, its previous ones (elsewhere, say) out
  const edits = rp.edits ?? [];
  const adminFiles = new Set([...rp.blocks.map((b) => b.file), ...edits.map((e) => e.file), ...(prev ? markedFiles(prev) : [])]);
  for (const file of adminFiles) {
    const add = { block: rp.blocks.find((b) => b.file === file), edits: edits.filter((e) => e.file === file) };
    changes.push(adminFileChange(layout, file, prev ? [prev] : [], add, others));
  }
  // files the previous install of this runtime wrote and this one does not (the bundle, once a
  // single executable replaces it): removed as uninstall would, unless another runtime uses them,
  // and after the new files are in place
  for (const [file, hash] of Object.entries(prev?.files ?? {}).reverse()) {
    if (files.some((t) => t.file === file) || ownedByOther(state, key, file)) continue;
    changes.push(removeFile(layout, file, hash, []));
  }
  changes.push(...(took?.leftovers ?? []));
  const next: State = { version: 1, runtimes: { ...state.runtimes } };
  const dirs = deepestFirst([...(prev?.dirs ?? []).filter((d) => fs.existsSync(layout.real(d))), ...createdDirs(layout, changes)]);
  next.runtimes[key] = {
    config: layout.config,
    files: Object.fromEntries(files.map((t) => [t.file, sha256(t.content)])),
    blocks: rp.blocks.map((b) => b.file),
    ...(edits.length ? { edits } : {}),
    ...(dirs.length ? { dirs } : {}),
    ...(opts.mode === 'nri' ? { nriRequired: !!opts.nriRequired } : {}),
    ...(opts.externalPlugin ? { externalPlugin: true } : {}),
    ...namedBinary(opts),
  };
  changes.push(stateChange(layout, next, stateBefore));
  return {
    layout,
    changes,
    next: [...rp.next, ...(unit ? [WATCH_START] : [])],
    notes: [...(took ? [took.note] : []), ...(rp.notes ?? []), ...(oci.note ? [oci.note] : []), ...(conf?.note ? [conf.note] : [])],
    verify: rp.verify,
    ...(rp.upgrade
      ? { upgrade: { socket: rp.upgrade.socket, configFiles: [...new Set([...rp.upgrade.configFiles, ...adminFiles])] } }
      : {}),
  };
}

interface OciRuntime {
  /** The `runtime` the front execs: a name or a path. */
  runtime: string;
  /** Where it came from, as a refusal names it. */
  from: string;
  /** CRI-O: its default runtime's runtime_root. */
  root?: string | undefined;
  note?: string | undefined;
}

/** --oci-runtime, else config.json's runtime, else CRI-O's default runtime (a CRI-O handler), else runc. */
function ociRuntimeOf(layout: Layout, opts: InstallOptions, setting: string | undefined): OciRuntime {
  if (opts.ociRuntime !== undefined) return { runtime: opts.ociRuntime, from: '--oci-runtime' };
  if (setting !== undefined) return { runtime: setting, from: `${SETTINGS_FILE}: runtime` };
  if (opts.runtime !== 'crio' || opts.mode === 'nri') return { runtime: 'runc', from: `${SETTINGS_FILE}: runtime` };
  const d = crioDefaultRuntime(layout, nodeCrio(opts.crio, layout));
  return {
    runtime: d.runtime,
    from: `CRI-O's default runtime "${d.name}" (${d.from}):`,
    root: d.root,
    note: `the front runs CRI-O's default runtime "${d.name}" (${d.from}): runtime ${d.runtime}, runtime_root ${d.root} (--oci-runtime names another)`,
  };
}

/** The --containerd / --crio install was given, absolute, for the record (status and doctor ask it again). */
function namedBinary(opts: InstallOptions): { binary?: string } {
  const named = opts.runtime === 'containerd' ? opts.containerd : opts.runtime === 'crio' ? opts.crio : undefined;
  return named === undefined ? {} : { binary: path.resolve(named) };
}

/** Flags given to a mode or runtime they do not belong to: refused before the node is read. */
function refuseMisplacedFlags(opts: InstallOptions): PluginFlags {
  if (opts.hooksDir !== undefined) absolute(opts.hooksDir, '--hooks-dir');
  if (opts.nriLog !== undefined && opts.mode !== 'nri')
    throw new EnvhookError('--nri-log is only valid with --mode nri (the pre-installed plugin writes it)');
  if (opts.nriLog !== undefined) absolute(opts.nriLog, '--nri-log');
  if (opts.externalPlugin && opts.mode !== 'nri')
    throw new EnvhookError('--external-plugin is only valid with --mode nri (it switches NRI on for a plugin run elsewhere)');
  if (opts.externalPlugin && opts.nriLog !== undefined)
    throw new EnvhookError("--nri-log and --external-plugin: an external plugin writes no log of install's; leave --nri-log out");
  if (opts.nriRequired && opts.mode !== 'nri')
    throw new EnvhookError('--nri-required is only valid with --mode nri (it makes the NRI plugin a required one)');
  if (opts.watchUnit === false && (opts.mode === 'nri' || opts.runtime === 'podman'))
    throw new EnvhookError('--no-watch-unit is only valid with the runtime handler of containerd or CRI-O (the NRI plugin watches itself)');
  if (opts.enableNri && (opts.mode !== 'nri' || opts.runtime !== 'containerd'))
    throw new EnvhookError("--enable-nri is only valid with --runtime containerd --mode nri (it switches on containerd's NRI)");
  return checkPluginFlags(
    { criSocket: opts.criSocket, evictUnapplied: opts.evictUnapplied, metricsAddress: opts.metricsAddress },
    opts.mode,
  );
}

function runtimePlan(
  layout: Layout,
  opts: InstallOptions,
  previous: RuntimeRecord | undefined,
  oci: OciRuntime,
  plugin: PluginFlags,
): RuntimePlan {
  if (opts.mode === 'nri') {
    if (opts.runtime === 'containerd') return containerdNriPlan(layout, { ...opts, previousEdits: previous?.edits, plugin });
    if (opts.runtime === 'crio')
      return crioNriPlan(layout, nriIndex(opts.index), opts.crio, !!opts.nriRequired, opts.nriLog, !!opts.externalPlugin, plugin);
    throw new EnvhookError('Podman has no NRI: install with --mode shim');
  }
  switch (opts.runtime) {
    case 'containerd':
      return containerdPlan(layout, opts);
    case 'crio':
      return crioPlan(layout, hookTemplates(opts), {
        hooksDir: opts.hooksDir,
        crio: opts.crio,
        ociRuntime: oci.runtime,
        runtimeRoot: oci.root,
      });
    case 'podman':
      return podmanPlan(layout, hookTemplates(opts));
  }
}

/** CRI-O's NRI drop-in has a name of its own: the runtime handler's stays where it is. */
function nriDefaults<T extends Pick<InstallOptions, 'runtime' | 'mode' | 'config'>>(opts: T): T {
  return opts.runtime === 'crio' && opts.mode === 'nri' && opts.config === undefined ? { ...opts, config: CRIO_NRI_DROP_IN } : opts;
}
